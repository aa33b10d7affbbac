//! The errors of the semantic strategy: a model folder that cannot be read, or an embedding that
//! fails.

use std::path::PathBuf;

/// Why the embedding model could not be loaded or run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SemanticError {
    /// No model folder was given: the environment variable is unset or empty.
    #[error(
        "no embedding model: set {variable} to the model's folder (the path `scripts/embedding-model.sh` prints), or give one with `SemanticModel::load`"
    )]
    NotConfigured {
        /// The variable that was read.
        variable: &'static str,
    },
    /// A file of the model folder is missing or cannot be read.
    #[error("cannot read {file} of the embedding model in {}: {message}", path.display())]
    Unreadable {
        /// The model folder.
        path: PathBuf,
        /// The file (`config.json`, `tokenizer.json` or `model.safetensors`).
        file: &'static str,
        /// What went wrong.
        message: String,
    },
    /// The files were read but do not make a model this library runs (a missing tensor, a
    /// shape that does not match the configuration, an architecture other than BERT).
    #[error("the embedding model in {} is not a BERT sentence encoder or a Model2Vec static model this library can run: {message}", path.display())]
    Unsupported {
        /// The model folder.
        path: PathBuf,
        /// What does not match.
        message: String,
    },
    /// A distilled model could not be written (see [`distill`](super::distill)).
    #[error("cannot write {file} of the distilled model in {}: {message}", path.display())]
    Unwritable {
        /// The folder written to.
        path: PathBuf,
        /// The file.
        file: &'static str,
        /// What went wrong.
        message: String,
    },
    /// Tokenizing or running the model failed on some text.
    #[error("the embedding model failed: {message}")]
    Inference {
        /// What went wrong.
        message: String,
    },
}
