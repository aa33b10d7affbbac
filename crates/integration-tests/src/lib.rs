//! Integration tests of toolsmith against real MCP servers (feature `mcp-servers`, the servers
//! installed by `scripts/install-mcp-servers.sh`) and the OpenTelemetry SDK (feature `otel`).
//! A crate of its own so that these test-only switches are not features of the library.
