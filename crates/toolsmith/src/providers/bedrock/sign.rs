//! AWS credentials and the Signature Version 4 signing of each request (`aws-sigv4`), over the
//! exact body bytes, fresh for every attempt.

use std::time::SystemTime;

use aws_sigv4::http_request::{SignableBody, SignableRequest, SigningSettings, sign};
use aws_sigv4::sign::v4;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

use crate::error::UserError;
use crate::model::ModelError;
use crate::providers::http::RequestSigner;

/// The service name Bedrock's runtime signs with.
const SERVICE: &str = "bedrock";

/// AWS credentials to sign Bedrock requests with: an access key id, its secret access key and,
/// for temporary credentials, a session token. Their [`Debug`] form shows the key id only.
///
/// ```
/// use toolsmith::providers::AwsCredentials;
///
/// let credentials = AwsCredentials::new("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
///     .session_token("temporary-session-token");
/// assert!(!format!("{credentials:?}").contains("EXAMPLEKEY"));
/// ```
#[derive(Clone)]
pub struct AwsCredentials {
    access_key_id: String,
    secret_access_key: String,
    session_token: Option<String>,
}

impl std::fmt::Debug for AwsCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AwsCredentials")
            .field("access_key_id", &self.access_key_id)
            .field("session_token", &self.session_token.as_ref().map(|_| "[REDACTED]"))
            .finish_non_exhaustive()
    }
}

impl AwsCredentials {
    /// Long-term credentials: an access key id and its secret access key.
    pub fn new(access_key_id: impl Into<String>, secret_access_key: impl Into<String>) -> Self {
        AwsCredentials {
            access_key_id: access_key_id.into().trim().to_string(),
            secret_access_key: secret_access_key.into().trim().to_string(),
            session_token: None,
        }
    }

    /// Adds the session token of temporary credentials (sent as `x-amz-security-token`).
    pub fn session_token(mut self, token: impl Into<String>) -> Self {
        self.session_token = Some(token.into().trim().to_string()).filter(|t| !t.is_empty());
        self
    }

    /// The credentials of `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` and `AWS_SESSION_TOKEN`,
    /// when the first two are set.
    pub fn from_env() -> Option<Self> {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        let credentials = AwsCredentials::new(var("AWS_ACCESS_KEY_ID")?, var("AWS_SECRET_ACCESS_KEY")?);
        Some(match var("AWS_SESSION_TOKEN") {
            Some(token) => credentials.session_token(token),
            None => credentials,
        })
    }

    /// The access key id (not a secret: it names the key).
    pub fn access_key_id(&self) -> &str {
        &self.access_key_id
    }

    /// The values kept out of error messages and logs.
    pub(super) fn secrets(&self) -> Vec<String> {
        std::iter::once(self.secret_access_key.clone()).chain(self.session_token.clone()).collect()
    }

    /// Empty keys, or keys that cannot go in a header, are refused when the model is built.
    pub(super) fn check(&self) -> Result<(), UserError> {
        if self.access_key_id.is_empty() || self.secret_access_key.is_empty() {
            return Err(UserError::new(
                "the AWS credentials for Bedrock have an empty access key id or secret access key: check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or the values given to `AwsCredentials::new(..)`",
            ));
        }
        let printable = |s: &str| s.bytes().all(|b| b.is_ascii_graphic());
        if !printable(&self.access_key_id)
            || !printable(&self.secret_access_key)
            || !self.session_token.as_deref().is_none_or(printable)
        {
            return Err(UserError::new(
                "the AWS credentials for Bedrock contain spaces, quotes or other characters keys never have: check the access key id, secret access key and session token",
            ));
        }
        Ok(())
    }
}

/// Signs each request with SigV4 for Bedrock in one region.
pub(super) struct SigV4Signer {
    credentials: aws_credential_types::Credentials,
    region: String,
}

impl SigV4Signer {
    pub(super) fn new(credentials: AwsCredentials, region: String) -> Self {
        let credentials = aws_credential_types::Credentials::new(
            credentials.access_key_id,
            credentials.secret_access_key,
            credentials.session_token,
            None,
            "toolsmith",
        );
        SigV4Signer { credentials, region }
    }

    fn error(what: impl std::fmt::Display) -> ModelError {
        ModelError::new("UserError", format!("could not sign the Bedrock request with SigV4: {what}"))
    }
}

impl RequestSigner for SigV4Signer {
    fn sign(&self, url: &str, headers: &mut HeaderMap, body: &[u8]) -> Result<Vec<String>, ModelError> {
        // The URL as the HTTP client sends it (normalized), with a host to sign.
        let parsed = reqwest::Url::parse(url).map_err(|e| Self::error(format_args!("the URL is invalid ({e})")))?;
        if parsed.host_str().is_none() {
            return Err(Self::error("the URL has no host; check the builder's `.base_url(...)`"));
        }
        let identity = self.credentials.clone().into();
        let params = v4::SigningParams::builder()
            .identity(&identity)
            .region(&self.region)
            .name(SERVICE)
            .time(SystemTime::now())
            .settings(SigningSettings::default())
            .build()
            .map_err(Self::error)?
            .into();
        let signed: Vec<(&str, &str)> =
            headers.iter().filter_map(|(name, value)| Some((name.as_str(), value.to_str().ok()?))).collect();
        let request = SignableRequest::new("POST", parsed.as_str(), signed.into_iter(), SignableBody::Bytes(body))
            .map_err(Self::error)?;
        let (instructions, signature) = sign(request, &params).map_err(Self::error)?.into_parts();
        let (new_headers, _params) = instructions.into_parts();
        let mut secrets = vec![signature];
        for h in new_headers {
            let name = HeaderName::from_static(h.name());
            let mut value = HeaderValue::from_str(h.value()).map_err(|_| Self::error("a header value is not valid"))?;
            let sensitive = h.sensitive() || name == reqwest::header::AUTHORIZATION;
            if sensitive {
                secrets.push(h.value().to_string());
            }
            value.set_sensitive(sensitive);
            headers.insert(name, value);
        }
        Ok(secrets)
    }
}
