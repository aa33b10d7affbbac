//! The text of a tool that is embedded: its name split into words, then its description.
//!
//! Parameters are left out: with their names and descriptions added, the hybrid ranking found
//! fewer of the needed tools on three of the four evaluation catalogues
//! (tests/search-eval/RESULTS.md), and the texts are longer to embed.

use crate::tool::ToolDefinition;

/// The name's words: `get_pull_request` and `getPullRequest` read `get pull request`.
pub(crate) fn name_words(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    let mut previous: Option<char> = None;
    for c in name.chars() {
        if c == '_' || c == '-' || c == '.' || c == '/' || c == ':' || c.is_whitespace() {
            if !out.ends_with(' ') && !out.is_empty() {
                out.push(' ');
            }
        } else {
            if c.is_uppercase() && previous.is_some_and(|p| p.is_lowercase() || p.is_ascii_digit()) {
                out.push(' ');
            }
            out.extend(c.to_lowercase());
        }
        previous = Some(c);
    }
    out.trim_end().to_string()
}

/// The text embedded for a tool definition.
pub(crate) fn tool_text(def: &ToolDefinition) -> String {
    let mut text = name_words(&def.name);
    if let Some(d) = def.description.as_deref().map(str::trim).filter(|d| !d.is_empty()) {
        text.push_str(": ");
        text.push_str(d);
    }
    text
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn names_read_as_words() {
        assert_eq!(name_words("get_pull_request"), "get pull request");
        assert_eq!(name_words("getPullRequest"), "get pull request");
        assert_eq!(name_words("repos/list-for-org"), "repos list for org");
    }

    #[test]
    fn text_is_the_name_then_the_description() {
        let def = ToolDefinition::new(
            "create_entities",
            json!({"type": "object", "properties": {"entityName": {"type": "string", "description": "The name."}}}),
        )
        .with_description("Create entities in the knowledge graph.");
        assert_eq!(tool_text(&def), "create entities: Create entities in the knowledge graph.");
        assert_eq!(tool_text(&ToolDefinition::new("ping", json!({}))), "ping");
    }
}
