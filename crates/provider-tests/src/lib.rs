//! Wire tests of toolsmith's provider adapters (OpenAI Chat and Responses, Anthropic, Gemini):
//! requests checked against the providers' documented shapes, responses and streams replayed
//! from fixtures of their API references through a local HTTP server. The tests are in `tests/`.
