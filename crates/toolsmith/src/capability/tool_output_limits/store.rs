//! Where spilled payloads go: [`OverflowStore`], kept in memory by default ([`MemoryStore`]) or
//! in files ([`FileStore`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;

/// Why a store could not write or read a payload.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// No payload is stored under the handle.
    #[error("no stored tool result for handle {handle:?}")]
    NotFound {
        /// The handle asked for.
        handle: String,
    },
    /// The storage failed.
    #[error("tool output store {operation} failed for {key:?}: {source}")]
    Io {
        /// `write` or `read`.
        operation: &'static str,
        /// The key or handle.
        key: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// Another backend's failure.
    #[error("tool output store: {message}")]
    Other {
        /// What went wrong.
        message: String,
    },
}

/// Persists spilled payloads and reads them back. `write` takes a key (`{run_id}/{call_id}.{retry}`)
/// and returns the handle the model is given; `read` takes that handle. A handle must be
/// self-contained: it is all a later run (resumed from the history) has.
pub trait OverflowStore: Send + Sync + 'static {
    /// Stores `data` under `key`, returning its handle.
    fn write(&self, key: String, data: Vec<u8>) -> BoxFuture<'_, Result<String, StoreError>>;
    /// The payload stored for `handle`.
    fn read(&self, handle: String) -> BoxFuture<'_, Result<Vec<u8>, StoreError>>;
}

/// The default store: payloads kept in memory, handle = key. Clones share their entries, so a run
/// resumed from a saved history reads the spills of earlier runs of the same store.
#[derive(Debug, Clone, Default)]
pub struct MemoryStore {
    entries: Arc<Mutex<HashMap<String, Arc<Vec<u8>>>>>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many payloads it holds.
    pub fn len(&self) -> usize {
        self.entries.lock().map(|e| e.len()).unwrap_or(0)
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl OverflowStore for MemoryStore {
    fn write(&self, key: String, data: Vec<u8>) -> BoxFuture<'_, Result<String, StoreError>> {
        let result = match self.entries.lock() {
            Ok(mut entries) => {
                entries.insert(key.clone(), Arc::new(data));
                Ok(key)
            }
            Err(_) => Err(StoreError::Other { message: "the store's lock is poisoned".into() }),
        };
        Box::pin(async move { result })
    }

    fn read(&self, handle: String) -> BoxFuture<'_, Result<Vec<u8>, StoreError>> {
        let found = self.entries.lock().ok().and_then(|e| e.get(&handle).cloned());
        Box::pin(async move { found.map(|d| d.as_ref().clone()).ok_or(StoreError::NotFound { handle }) })
    }
}

/// Payloads kept as files under a directory (the harness's `LocalFileStore`): the handle is the
/// key, a relative `run_id/tool_call_id.retry` path under the root, so spills outlive the process
/// and a later run reads them. Segments are sanitised, reads are confined to the root, and on Unix
/// the root must not be a symbolic link, must belong to the current user and is made `0700`.
#[derive(Debug, Clone)]
pub struct FileStore {
    root: PathBuf,
    cleanup_after: Option<Duration>,
}

impl Default for FileStore {
    /// `pyai_harness_overflow-<euid>` under the system temp directory, as the harness's default.
    fn default() -> Self {
        #[cfg(unix)]
        let name = match current_uid() {
            Some(uid) => format!("pyai_harness_overflow-{uid}"),
            None => "pyai_harness_overflow".to_string(),
        };
        #[cfg(not(unix))]
        let name = "pyai_harness_overflow".to_string();
        FileStore::new(std::env::temp_dir().join(name))
    }
}

impl FileStore {
    /// A store under `root` (created on the first write).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        FileStore { root: root.into(), cleanup_after: None }
    }

    /// Delete spills older than `age` (by modification time) after each write; best effort.
    pub fn cleanup_after(mut self, age: Duration) -> Self {
        self.cleanup_after = Some(age);
        self
    }

    /// The directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    fn path_for(root: &Path, key: &str) -> PathBuf {
        let mut path = root.to_path_buf();
        let mut any = false;
        for segment in key.split('/').filter(|s| !s.is_empty()) {
            path.push(safe_segment(segment));
            any = true;
        }
        if !any {
            path.push("_");
        }
        path
    }
}

/// The effective user (the owner of the process's `/proc/self`), where the system shows it.
#[cfg(unix)]
fn current_uid() -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").map(|m| m.uid()).ok()
}

/// Refuses a symlinked or foreign root and tightens its permissions (Unix).
fn check_root(root: &Path) -> std::io::Result<()> {
    let meta = std::fs::symlink_metadata(root)?;
    if meta.file_type().is_symlink() {
        return Err(std::io::Error::new(std::io::ErrorKind::PermissionDenied, "the store root is a symbolic link"));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        if current_uid().is_some_and(|uid| meta.uid() != uid) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                "the store root is not owned by the current user",
            ));
        }
        if meta.mode() & 0o077 != 0 {
            std::fs::set_permissions(root, std::fs::Permissions::from_mode(0o700))?;
        }
    }
    Ok(())
}

fn prune(root: &Path, age: Duration) {
    let Ok(entries) = std::fs::read_dir(root) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        match entry.file_type() {
            Ok(t) if t.is_dir() => prune(&path, age),
            Ok(t) if t.is_file() => {
                let old = entry.metadata().and_then(|m| m.modified()).ok().and_then(|m| m.elapsed().ok());
                if old.is_some_and(|elapsed| elapsed > age) {
                    let _ = std::fs::remove_file(&path);
                }
            }
            _ => {}
        }
    }
}

/// One path segment made filesystem-safe; `.`, `..` and empty ones become `_`.
fn safe_segment(segment: &str) -> String {
    let mut cleaned = String::with_capacity(segment.len());
    let mut in_run = false;
    for c in segment.chars() {
        if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
            cleaned.push(c);
            in_run = false;
        } else if !in_run {
            cleaned.push('_');
            in_run = true;
        }
    }
    if matches!(cleaned.as_str(), "" | "." | "..") { "_".into() } else { cleaned }
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> std::io::Result<T> + Send + 'static,
) -> Result<std::io::Result<T>, StoreError> {
    tokio::task::spawn_blocking(f).await.map_err(|e| StoreError::Other { message: e.to_string() })
}

impl OverflowStore for FileStore {
    fn write(&self, key: String, data: Vec<u8>) -> BoxFuture<'_, Result<String, StoreError>> {
        let root = self.root.clone();
        let cleanup_after = self.cleanup_after;
        let path = Self::path_for(&root, &key);
        Box::pin(async move {
            let written = blocking(move || {
                #[cfg(unix)]
                {
                    use std::os::unix::fs::DirBuilderExt;
                    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(&root)?;
                }
                #[cfg(not(unix))]
                std::fs::create_dir_all(&root)?;
                check_root(&root)?;
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent)?;
                }
                std::fs::write(&path, &data)?;
                if let Some(age) = cleanup_after {
                    prune(&root, age);
                }
                Ok(())
            })
            .await?;
            written.map(|()| key.clone()).map_err(|source| StoreError::Io { operation: "write", key, source })
        })
    }

    fn read(&self, handle: String) -> BoxFuture<'_, Result<Vec<u8>, StoreError>> {
        let root = self.root.clone();
        let path = Self::path_for(&root, &handle);
        Box::pin(async move {
            let read = blocking(move || {
                check_root(&root)?;
                let root = std::fs::canonicalize(&root)?;
                let path = std::fs::canonicalize(path)?;
                if !path.starts_with(&root) {
                    return Err(std::io::Error::new(std::io::ErrorKind::PermissionDenied, "outside the store root"));
                }
                std::fs::read(path)
            })
            .await?;
            read.map_err(|source| match source.kind() {
                std::io::ErrorKind::NotFound => StoreError::NotFound { handle: handle.clone() },
                _ => StoreError::Io { operation: "read", key: handle.clone(), source },
            })
        })
    }
}
