//! axum handlers (feature `axum`).
