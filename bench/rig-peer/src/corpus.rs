//! The deterministic tool corpus of BENCH.md §2, copied from `reference_pydantic_ai.py`
//! (`SERVICES`, `VERBS`, `OBJECTS`, `FILLERS`, `PARAMS`, `tool_spec`, `corpus`, `corpus_jsonl`),
//! as `crates/toolsmith-bench/src/corpus.rs` has it. The two sha256 checks of BENCH.md §2 run at
//! start-up and in the tests, so a drift from the reference fails loudly.

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

const SERVICES: [(&str, &str); 40] = [
    ("github", "GitHub"),
    ("gitlab", "GitLab"),
    ("slack", "Slack"),
    ("jira", "Jira"),
    ("confluence", "Confluence"),
    ("gdrive", "Google Drive"),
    ("gmail", "Gmail"),
    ("gcal", "Google Calendar"),
    ("notion", "Notion"),
    ("linear", "Linear"),
    ("zendesk", "Zendesk"),
    ("hubspot", "HubSpot"),
    ("salesforce", "Salesforce"),
    ("stripe", "Stripe"),
    ("paypal", "PayPal"),
    ("shopify", "Shopify"),
    ("twilio", "Twilio"),
    ("sendgrid", "SendGrid"),
    ("dropbox", "Dropbox"),
    ("box", "Box"),
    ("asana", "Asana"),
    ("trello", "Trello"),
    ("figma", "Figma"),
    ("airtable", "Airtable"),
    ("datadog", "Datadog"),
    ("pagerduty", "PagerDuty"),
    ("sentry", "Sentry"),
    ("aws", "AWS"),
    ("gcp", "Google Cloud"),
    ("azure", "Azure"),
    ("docker", "Docker Hub"),
    ("k8s", "Kubernetes"),
    ("postgres", "PostgreSQL"),
    ("redis", "Redis"),
    ("mongodb", "MongoDB"),
    ("snowflake", "Snowflake"),
    ("bigquery", "BigQuery"),
    ("okta", "Okta"),
    ("discord", "Discord"),
    ("teams", "Microsoft Teams"),
];

const VERBS: [(&str, &str); 13] = [
    ("get", "Get the {o} with the given identifier"),
    ("list", "List every {o} the caller can see"),
    ("search", "Search for each {o} that matches a text query"),
    ("update", "Update the fields of an existing {o}"),
    ("delete", "Delete the {o} permanently"),
    ("send", "Send the {o} to the listed recipients"),
    ("archive", "Archive the {o} so it no longer shows up"),
    ("export", "Export the {o} as a CSV file"),
    ("create", "Create a new {o}"),
    ("assign", "Assign the {o} to a user"),
    ("close", "Close the {o} and record the reason"),
    ("approve", "Approve the pending {o}"),
    ("schedule", "Schedule the {o} for a later time"),
];

const OBJECTS: [&str; 47] = [
    "issue",
    "pull_request",
    "message",
    "channel",
    "ticket",
    "file",
    "folder",
    "account",
    "invoice",
    "payment",
    "customer",
    "event",
    "email",
    "page",
    "database",
    "record",
    "user",
    "team",
    "project",
    "task",
    "label",
    "repository",
    "branch",
    "commit",
    "deployment",
    "cluster",
    "bucket",
    "secret",
    "order",
    "product",
    "subscription",
    "report",
    "dashboard",
    "alert",
    "metric",
    "comment",
    "review",
    "release",
    "webhook",
    "contact",
    "lead",
    "document",
    "meeting",
    "incident",
    "role",
    "group",
    "workflow",
];

const FILLERS: [&str; 11] = [
    "Supports pagination.",
    "Returns a JSON summary.",
    "Requires an API token with write scope.",
    "Results are cached for five minutes.",
    "Use this for bulk operations.",
    "Dates use ISO 8601.",
    "Fails if the caller lacks permission.",
    "Idempotent when called with the same arguments.",
    "Rate limited to 100 calls per minute.",
    "Includes metadata such as owner and timestamps.",
    "Works across all projects in the workspace.",
];

const PARAMS: [(&str, &str, &str); 20] = [
    ("id", "string", "Unique identifier of the {o}."),
    ("query", "string", "Free-text search query."),
    ("limit", "integer", "Maximum number of results to return."),
    ("offset", "integer", "Number of results to skip."),
    ("owner", "string", "Login of the {o} owner."),
    ("title", "string", "Short title of the {o}."),
    ("body", "string", "Main text content of the {o}."),
    ("labels", "array", "Labels to attach to the {o}."),
    ("priority", "integer", "Priority from 1 (highest) to 5 (lowest)."),
    ("due_date", "string", "Due date in YYYY-MM-DD format."),
    ("amount", "number", "Amount in the account currency."),
    ("currency", "string", "Three-letter ISO 4217 currency code."),
    ("notify", "boolean", "Whether to notify watchers of the {o}."),
    ("dry_run", "boolean", "Validate the request without applying it."),
    ("assignee", "string", "User to assign the {o} to."),
    ("status", "string", "New status of the {o}."),
    ("channel", "string", "Channel or queue that receives the {o}."),
    ("tags", "array", "Tags used to filter results."),
    ("timeout", "number", "Timeout in seconds."),
    ("include_archived", "boolean", "Whether to include archived items."),
];

/// sha256 of the JSONL dump of `corpus(1000, Plain)` (BENCH.md §2).
pub const SHA256_1000_PLAIN: &str = "885b77babc7a5b39dd3cd56c64e581a8bacd30e3a25a87b645a34c1972a3945d";
/// sha256 of the JSONL dump of `corpus(10000, Service)` (BENCH.md §2).
pub const SHA256_10000_SERVICE: &str = "c35709fc484236500bbd483cac2395c5f39410f78d0830eea122ea73b8660cdd";

/// How corpus tools are named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Naming {
    /// `tool_0000` (`register_1000_tools`, `rss_1000_tools_mb`).
    Plain,
    /// `github_get_issue_0000` (the 10k workloads).
    Service,
}

/// One corpus tool: name, description and parameters JSON schema.
#[derive(Debug, Clone)]
pub struct Spec {
    /// The tool's name.
    pub name: String,
    /// The tool's description.
    pub description: String,
    /// The JSON schema of its parameters. rig's `DynamicTool` takes the schema by value, so
    /// building a tool copies it (inside the timing of `register_1000_tools`).
    pub schema: Value,
}

/// Corpus tool `i` (Python: `tool_spec(i, naming)`).
pub fn tool_spec(i: usize, naming: Naming) -> Spec {
    let (svc, svc_title) = SERVICES[i % 40];
    let (verb, phrase) = VERBS[i % 13];
    let obj = OBJECTS[i % 47];
    let o = obj.replace('_', " ");
    let name = match naming {
        Naming::Plain => format!("tool_{i:04}"),
        Naming::Service => format!("{svc}_{verb}_{obj}_{i:04}"),
    };
    let description = format!("{} in {svc_title}. {}", phrase.replace("{o}", &o), FILLERS[i % 11]);
    let mut properties = Map::new();
    let mut names = Vec::with_capacity(3);
    for k in 0..3 {
        let (pname, ptype, pdesc) = PARAMS[(i + 7 * k) % 20];
        let pdesc = pdesc.replace("{o}", &o);
        let prop = if ptype == "array" {
            json!({"type": "array", "items": {"type": "string"}, "description": pdesc})
        } else {
            json!({"type": ptype, "description": pdesc})
        };
        properties.insert(pname.to_string(), prop);
        names.push(pname);
    }
    let schema = json!({
        "type": "object",
        "properties": properties,
        "required": [names[0], names[1]],
        "additionalProperties": false,
    });
    Spec { name, description, schema }
}

/// The first `n` corpus tools (Python: `corpus(n, naming)`).
pub fn corpus(n: usize, naming: Naming) -> Vec<Spec> {
    (0..n).map(|i| tool_spec(i, naming)).collect()
}

/// The corpus as JSONL: one compact `{"name","description","parameters"}` object per line
/// (Python: `corpus_jsonl`; the corpus is ASCII, so `ensure_ascii` changes nothing).
pub fn corpus_jsonl(specs: &[Spec]) -> String {
    let mut out = String::new();
    for s in specs {
        let line = json!({"name": s.name, "description": s.description, "parameters": &s.schema});
        out.push_str(&line.to_string());
        out.push('\n');
    }
    out
}

/// The hex sha256 of the corpus' JSONL dump.
pub fn sha256_hex(specs: &[Spec]) -> String {
    Sha256::digest(corpus_jsonl(specs).as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn examples_of_bench_md() {
        let t0 = tool_spec(0, Naming::Service);
        assert_eq!(t0.name, "github_get_issue_0000");
        assert_eq!(t0.description, "Get the issue with the given identifier in GitHub. Supports pagination.");
        let props: Vec<&String> = t0.schema["properties"].as_object().unwrap().keys().collect();
        assert_eq!(props, ["id", "labels", "assignee"]);
        assert_eq!(t0.schema["required"], json!(["id", "labels"]));
        let t1880 = tool_spec(1880, Naming::Service);
        assert_eq!(t1880.name, "github_create_issue_1880");
        assert_eq!(t1880.description, "Create a new issue in GitHub. Works across all projects in the workspace.");
        assert_eq!(tool_spec(7, Naming::Plain).name, "tool_0007");
    }

    #[test]
    fn sha256_of_both_corpora_match_bench_md() {
        assert_eq!(sha256_hex(&corpus(1000, Naming::Plain)), SHA256_1000_PLAIN);
        assert_eq!(sha256_hex(&corpus(10_000, Naming::Service)), SHA256_10000_SERVICE);
    }
}
