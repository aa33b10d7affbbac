//! Words of software requests that name the same thing: a request says "folder" where the tool
//! says "directory", "remove" where it says "delete". Each group is general English usage, not
//! the vocabulary of one catalogue; a query word brings the other words of its group in at a
//! lower weight ([`Bm25Params::synonym_weight`](super::Bm25Params::synonym_weight)).

/// The groups, each a set of interchangeable words (matched by stem).
pub(super) const GROUPS: &[&[&str]] = &[
    &["directory", "folder", "dir"],
    &["delete", "remove", "erase", "destroy"],
    &["create", "add", "new", "make"],
    &["get", "fetch", "retrieve", "obtain"],
    &["find", "search", "lookup", "locate"],
    &["update", "edit", "modify", "change", "alter"],
    &["run", "execute", "invoke", "launch", "trigger"],
    &["stop", "halt", "terminate", "kill", "abort"],
    &["picture", "image", "photo", "img"],
    &["message", "msg"],
    &["email", "mail"],
    &["repository", "repo"],
    &["configuration", "config", "settings"],
    &["database", "db"],
    &["information", "info", "details"],
    &["parameter", "param", "argument", "arg"],
    &["identifier", "id"],
    &["environment", "env"],
    &["authentication", "auth", "login", "signin"],
    &["calculate", "compute"],
    &["convert", "transform"],
    &["buy", "purchase"],
    &["book", "reserve", "reservation"],
    &["cost", "price"],
    &["document", "doc"],
    &["statistics", "stats"],
    &["application", "app"],
    &["organization", "organisation", "org"],
];
