//! The gateway's configuration file: `[servers.NAME]` tables, each a stdio command or a
//! streamable HTTP URL, with optional allow, deny and approval lists of tool names.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde::Deserialize;
use toolsmith::toolset::McpToolset;

/// The whole file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GatewayConfig {
    /// The upstream servers by name (the prefix of their tools' names).
    #[serde(default)]
    pub servers: BTreeMap<String, ServerConfig>,
}

/// One upstream server.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerConfig {
    /// The command that starts a stdio server.
    pub command: Option<String>,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Environment variables set for it (of the gateway's own environment it gets only HOME,
    /// LOGNAME, PATH, SHELL, TERM and USER, unless `inherit_env`).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Whether it gets the gateway's whole environment (API keys included).
    #[serde(default)]
    pub inherit_env: bool,
    /// The URL of a streamable HTTP server.
    pub url: Option<String>,
    /// HTTP headers sent with every request (`url` only).
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// A bearer token (`url` only).
    pub bearer_token: Option<String>,
    /// Only these tools (by their name on the server) are offered.
    pub allow: Option<Vec<String>>,
    /// These tools are never offered.
    #[serde(default)]
    pub deny: Vec<String>,
    /// Calls of these tools are approved by the user first, through the client's elicitation
    /// (a client that cannot elicit gets an error).
    #[serde(default)]
    pub approve: Vec<String>,
    /// How long one call may take, in seconds (default 120).
    pub timeout_secs: Option<f64>,
    /// The largest message taken from the server, in bytes (default 16 MiB): a larger result
    /// is an error and the server is reconnected.
    pub max_message_bytes: Option<usize>,
}

impl ServerConfig {
    /// Whether the server offers a tool of this name.
    pub fn allows(&self, tool: &str) -> bool {
        self.allow.as_ref().is_none_or(|allow| allow.iter().any(|a| a == tool)) && !self.deny.iter().any(|d| d == tool)
    }

    /// Whether a call of this tool needs the user's approval.
    pub fn needs_approval(&self, tool: &str) -> bool {
        self.approve.iter().any(|a| a == tool)
    }

    /// The client toolset of this server.
    pub fn toolset(&self, name: &str) -> McpToolset {
        let mut mcp = match (&self.command, &self.url) {
            (Some(command), _) => {
                let mut mcp = McpToolset::stdio(command.clone(), self.args.clone()).inherit_env(self.inherit_env);
                for (k, v) in &self.env {
                    mcp = mcp.env(k.clone(), v.clone());
                }
                mcp
            }
            (None, url) => {
                let mut mcp = McpToolset::http(url.clone().unwrap_or_default());
                for (k, v) in &self.headers {
                    mcp = mcp.header(k.clone(), v.clone());
                }
                if let Some(token) = &self.bearer_token {
                    mcp = mcp.bearer_token(token.clone());
                }
                mcp
            }
        };
        if let Some(secs) = self.timeout_secs.filter(|s| s.is_finite() && *s > 0.0) {
            mcp = mcp.request_timeout(Duration::from_secs_f64(secs));
        }
        if let Some(bytes) = self.max_message_bytes {
            mcp = mcp.max_message_size(bytes);
        }
        mcp.name(name)
    }
}

/// Reads and checks the file: every server has a valid name and exactly one of `command` and
/// `url`.
pub fn load(path: &Path) -> Result<GatewayConfig, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let config: GatewayConfig = toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    check(&config)?;
    Ok(config)
}

fn check(config: &GatewayConfig) -> Result<(), String> {
    if config.servers.is_empty() {
        return Err("the configuration has no [servers.NAME] table".into());
    }
    for (name, server) in &config.servers {
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
            return Err(format!("server name '{name}': use letters, digits, '-' and '_'"));
        }
        match (&server.command, &server.url) {
            (Some(_), Some(_)) => return Err(format!("[servers.{name}]: give `command` or `url`, not both")),
            (None, None) => return Err(format!("[servers.{name}]: give `command` (stdio) or `url` (streamable HTTP)")),
            (Some(_), None) if !server.headers.is_empty() || server.bearer_token.is_some() => {
                return Err(format!("[servers.{name}]: `headers` and `bearer_token` apply only to `url` servers"));
            }
            (None, Some(_)) if !server.env.is_empty() || !server.args.is_empty() || server.inherit_env => {
                return Err(format!(
                    "[servers.{name}]: `args`, `env` and `inherit_env` apply only to `command` servers"
                ));
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<GatewayConfig, String> {
        let config: GatewayConfig = toml::from_str(text).map_err(|e| e.to_string())?;
        check(&config).map(|()| config)
    }

    #[test]
    fn servers_are_commands_or_urls() {
        let config = parse(
            "[servers.files]\ncommand = \"node\"\nargs = [\"fs.js\", \"/tmp\"]\ndeny = [\"write_file\"]\napprove = [\"move_file\"]\n\
             [servers.web]\nurl = \"http://127.0.0.1:1/mcp\"\nheaders = { X-Key = \"k\" }\n",
        )
        .unwrap();
        assert_eq!(config.servers["files"].args, ["fs.js", "/tmp"]);
        assert!(!config.servers["files"].allows("write_file"));
        assert!(config.servers["files"].allows("read_text_file"));
        assert!(config.servers["files"].needs_approval("move_file"));
        assert!(!config.servers["files"].needs_approval("read_text_file"));
        assert!(parse("[servers.x]\ncommand = \"a\"\nurl = \"b\"\n").unwrap_err().contains("not both"));
        assert!(parse("[servers.x]\nargs = []\n").unwrap_err().contains("give `command`"));
        assert!(parse("[servers.x]\ncommand = \"a\"\ntypo = 1\n").is_err());
        assert!(
            parse("[servers.x]\nurl = \"http://h/mcp\"\ninherit_env = true\n")
                .unwrap_err()
                .contains("only to `command`")
        );
        assert!(parse("[servers.x]\ncommand = \"a\"\nbearer_token = \"t\"\n").unwrap_err().contains("only to `url`"));
        assert!(parse("[servers.x]\ncommand = \"a\"\ninherit_env = true\n").unwrap().servers["x"].inherit_env);
        assert!(parse("[servers.\"a b\"]\ncommand = \"a\"\n").is_err());
    }
}
