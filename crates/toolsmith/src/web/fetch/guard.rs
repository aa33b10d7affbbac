//! What a fetch may reach: the domain lists, and the address policy checked on IP literals and
//! in the DNS resolver (`GuardedResolver`).

use super::*;

/// A URL's host, for the domain lists.
#[derive(Debug)]
pub(crate) enum HostKind {
    Domain(String),
    Ip(IpAddr),
}

/// A URL's host for the domain lists: a lowercase domain without its trailing dot, or an IP
/// address; `None` for a URL without a host.
pub(crate) fn host_kind(url: &Url) -> Option<HostKind> {
    match url.host()? {
        Host::Domain(d) => {
            let d = d.trim_end_matches('.').to_ascii_lowercase();
            if d.is_empty() {
                return None;
            }
            Some(match d.trim_start_matches('[').trim_end_matches(']').parse::<IpAddr>() {
                Ok(ip) => HostKind::Ip(ip),
                Err(_) => HostKind::Domain(d),
            })
        }
        Host::Ipv4(ip) => Some(HostKind::Ip(IpAddr::V4(ip))),
        Host::Ipv6(ip) => Some(HostKind::Ip(IpAddr::V6(ip))),
    }
}

/// Allowed and blocked domains applied to URLs by the fetcher's rule (a domain matches itself
/// and its subdomains, an IP address itself), for the other local web tools. An entry that is
/// neither a domain nor an address matches nothing.
#[derive(Debug, Clone)]
pub(crate) struct DomainLists {
    pub(crate) allowed: Option<Vec<DomainRule>>,
    pub(crate) blocked: Vec<DomainRule>,
}

impl DomainLists {
    /// The lists, from their entries.
    pub(crate) fn new(allowed: Option<&[String]>, blocked: &[String]) -> Self {
        let rules = |entries: &[String]| -> Vec<DomainRule> {
            entries.iter().filter_map(|e| parse_rules(std::slice::from_ref(e), "domains").ok()).flatten().collect()
        };
        DomainLists { allowed: allowed.map(rules), blocked: rules(blocked) }
    }

    /// Whether `url` may be used: it has a host, inside the allowed domains (when there are
    /// any) and outside the blocked ones.
    pub(crate) fn admits(&self, url: &str) -> bool {
        let Some(host) = Url::parse(url).ok().as_ref().and_then(host_kind) else { return false };
        self.allowed.as_ref().is_none_or(|a| a.iter().any(|r| r.matches(&host)))
            && !self.blocked.iter().any(|r| r.matches(&host))
    }
}

/// An entry of the allowed or blocked domains.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum DomainRule {
    /// A domain, ASCII lowercase without a trailing dot: matches itself and its subdomains.
    Domain(String),
    /// An IP address: matches itself.
    Ip(IpAddr),
}

impl DomainRule {
    pub(crate) fn matches(&self, host: &HostKind) -> bool {
        match (self, host) {
            (DomainRule::Domain(rule), HostKind::Domain(d)) => {
                d == rule
                    || (d.len() > rule.len() && d.ends_with(rule.as_str()) && d[..d.len() - rule.len()].ends_with('.'))
            }
            (DomainRule::Ip(rule), HostKind::Ip(ip)) => canonical(*rule) == canonical(*ip),
            _ => false,
        }
    }
}

impl fmt::Display for DomainRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DomainRule::Domain(d) => f.write_str(d),
            DomainRule::Ip(ip) => write!(f, "{ip}"),
        }
    }
}

pub(crate) fn parse_rules(entries: &[String], setting: &str) -> Result<Vec<DomainRule>, UserError> {
    entries
        .iter()
        .map(|entry| {
            let e = entry.trim().trim_start_matches("*.").trim_matches('.');
            if let Ok(ip) = e.trim_start_matches('[').trim_end_matches(']').parse::<IpAddr>() {
                return Ok(DomainRule::Ip(ip));
            }
            match Host::parse(e) {
                Ok(Host::Domain(d)) if !d.is_empty() => Ok(DomainRule::Domain(d.to_ascii_lowercase())),
                Ok(Host::Ipv4(ip)) => Ok(DomainRule::Ip(IpAddr::V4(ip))),
                Ok(Host::Ipv6(ip)) => Ok(DomainRule::Ip(IpAddr::V6(ip))),
                _ => Err(UserError::new(format!(
                    "WebFetcher::builder().{setting}(...) got `{entry}`, which is not a domain name or an IP \
                     address; give a domain such as `example.com` (it also matches its subdomains), not a URL"
                ))),
            }
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Addresses

/// Which non-public addresses may be connected to.
#[derive(Debug)]
pub(crate) struct AddressPolicy {
    /// Every address may.
    pub(crate) allow_private: bool,
    /// These exact addresses and ports may.
    pub(crate) allowed: Vec<SocketAddr>,
}

impl AddressPolicy {
    /// `Ok` when `ip` may be connected to on `port` (`None`: the port is not known, and only
    /// public addresses pass); else why not.
    pub(crate) fn check(&self, ip: IpAddr, port: Option<u16>) -> Result<(), String> {
        if self.allow_private {
            return Ok(());
        }
        let Some(reason) = forbidden_reason(ip) else { return Ok(()) };
        let ip = canonical(ip);
        if let Some(port) = port
            && self.allowed.iter().any(|a| a.port() == port && canonical(a.ip()) == ip)
        {
            return Ok(());
        }
        Err(reason)
    }

    /// The ports of the allowed addresses, sorted.
    pub(crate) fn allowed_ports(&self) -> Vec<u16> {
        let mut ports: Vec<u16> = self.allowed.iter().map(SocketAddr::port).collect();
        ports.sort_unstable();
        ports
    }
}

/// An IPv4-mapped IPv6 address as IPv4, anything else unchanged.
pub(crate) fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// Whether an address is public, that is one [`WebFetcher`] connects to by default. Not public:
/// loopback, private (RFC 1918), shared address space (100.64.0.0/10), link-local (including
/// cloud metadata services at `169.254.169.254`), unique-local and site-local IPv6,
/// unspecified, "this network" (0.0.0.0/8), broadcast, multicast, documentation, benchmarking
/// and reserved ranges, IETF protocol assignments (192.0.0.0/24, 2001::/23, including Teredo),
/// discard-only and local-use NAT64 prefixes, every IPv6 address outside the global unicast
/// range `2000::/3`, and the IPv4-mapped, IPv4-compatible, NAT64 (`64:ff9b::/96`) and 6to4
/// (`2002::/16`) forms of non-public IPv4 addresses (IPv4-compatible forms are all refused).
///
/// ```
/// use toolsmith::web::is_public_address;
///
/// assert!(is_public_address("93.184.215.14".parse().unwrap()));
/// assert!(!is_public_address("169.254.169.254".parse().unwrap()));
/// assert!(!is_public_address("::ffff:10.0.0.1".parse().unwrap()));
/// assert!(!is_public_address("64:ff9b::7f00:1".parse().unwrap()));
/// ```
pub fn is_public_address(ip: IpAddr) -> bool {
    forbidden_reason(ip).is_none()
}

/// What kind of non-public address `ip` is, or `None` when it is public.
pub(crate) fn forbidden_reason(ip: IpAddr) -> Option<String> {
    match ip {
        IpAddr::V4(v4) => v4_reason(v4).map(str::to_string),
        IpAddr::V6(v6) => v6_reason(v6),
    }
}

/// The non-public IPv4 ranges: network, prefix length, what they are. The first match names the
/// address.
pub(crate) const V4_RANGES: &[([u8; 4], u8, &str)] = &[
    ([0, 0, 0, 0], 32, "the unspecified address"),
    ([0, 0, 0, 0], 8, "a \"this network\" address (0.0.0.0/8)"),
    ([10, 0, 0, 0], 8, "a private address (RFC 1918)"),
    ([100, 64, 0, 0], 10, "a shared address space address (carrier-grade NAT, 100.64.0.0/10)"),
    ([127, 0, 0, 0], 8, "a loopback address"),
    ([169, 254, 0, 0], 16, "a link-local address (cloud metadata services such as 169.254.169.254 answer there)"),
    ([172, 16, 0, 0], 12, "a private address (RFC 1918)"),
    ([192, 0, 0, 0], 24, "an IETF protocol assignment (192.0.0.0/24)"),
    ([192, 0, 2, 0], 24, "a documentation address (192.0.2.0/24)"),
    ([192, 88, 99, 0], 24, "a 6to4 relay anycast address (192.88.99.0/24)"),
    ([192, 168, 0, 0], 16, "a private address (RFC 1918)"),
    ([198, 18, 0, 0], 15, "a benchmarking address (198.18.0.0/15)"),
    ([198, 51, 100, 0], 24, "a documentation address (198.51.100.0/24)"),
    ([203, 0, 113, 0], 24, "a documentation address (203.0.113.0/24)"),
    ([224, 0, 0, 0], 4, "a multicast address"),
    ([255, 255, 255, 255], 32, "the broadcast address"),
    ([240, 0, 0, 0], 4, "a reserved address (240.0.0.0/4)"),
];

pub(crate) fn v4_reason(ip: Ipv4Addr) -> Option<&'static str> {
    let n = u32::from(ip);
    V4_RANGES.iter().find_map(|&(net, prefix, reason)| {
        let mask = u32::MAX.checked_shl(32 - u32::from(prefix)).unwrap_or(0);
        (n & mask == u32::from_be_bytes(net) & mask).then_some(reason)
    })
}

pub(crate) fn in_v6(ip: Ipv6Addr, net: u128, prefix: u32) -> bool {
    let mask = u128::MAX.checked_shl(128 - prefix).unwrap_or(0);
    u128::from(ip) & mask == net & mask
}

pub(crate) fn v6_reason(ip: Ipv6Addr) -> Option<String> {
    let n = u128::from(ip);
    let embedded = |v4: Ipv4Addr, form: &str| v4_reason(v4).map(|r| format!("{r} ({v4}) in {form} form"));
    if ip.is_unspecified() {
        return Some("the unspecified address".into());
    }
    if ip.is_loopback() {
        return Some("a loopback address".into());
    }
    // ::ffff:0:0/96, IPv4-mapped: the embedded IPv4 address decides.
    if let Some(v4) = ip.to_ipv4_mapped() {
        return embedded(v4, "IPv4-mapped IPv6");
    }
    // ::/96, IPv4-compatible (deprecated): always refused.
    if n >> 32 == 0 {
        let v4 = Ipv4Addr::from((n & 0xffff_ffff) as u32);
        return Some(
            embedded(v4, "IPv4-compatible IPv6")
                .unwrap_or_else(|| "an IPv4-compatible IPv6 address (::/96, deprecated)".into()),
        );
    }
    // 64:ff9b::/96, the NAT64 well-known prefix: the embedded IPv4 address decides.
    if in_v6(ip, 0x0064_ff9b << 96, 96) {
        return embedded(Ipv4Addr::from((n & 0xffff_ffff) as u32), "NAT64 (64:ff9b::/96)");
    }
    let ranges: &[(u128, u32, &str)] = &[
        (0x0064_ff9b_0001 << 80, 48, "a local-use NAT64 address (64:ff9b:1::/48)"),
        (0x0100 << 112, 64, "a discard-only address (100::/64)"),
        (0xfc00 << 112, 7, "a unique-local address (fc00::/7)"),
        (0xfe80 << 112, 10, "a link-local address (fe80::/10)"),
        (0xfec0 << 112, 10, "a site-local address (fec0::/10, deprecated)"),
        (0xff00 << 112, 8, "a multicast address"),
        (0x2001_0db8 << 96, 32, "a documentation address (2001:db8::/32)"),
        (0x3fff << 112, 20, "a documentation address (3fff::/20)"),
        (0x2001_0000 << 96, 32, "a Teredo address (2001::/32)"),
        (0x2001_0000 << 96, 23, "an IETF protocol assignment (2001::/23)"),
    ];
    if let Some(&(_, _, reason)) = ranges.iter().find(|&&(net, prefix, _)| in_v6(ip, net, prefix)) {
        return Some(reason.into());
    }
    // 2002::/16, 6to4: the embedded IPv4 address decides.
    if in_v6(ip, 0x2002 << 112, 16) {
        return embedded(Ipv4Addr::from(((n >> 80) & 0xffff_ffff) as u32), "6to4 (2002::/16)");
    }
    if !in_v6(ip, 0x2000 << 112, 3) {
        return Some("a reserved address (outside the global unicast range 2000::/3)".into());
    }
    None
}

/// The fetcher's DNS resolver: resolves with Tokio and keeps only the addresses the policy
/// allows, so that the connection goes to a checked address.
pub(crate) struct GuardedResolver {
    pub(crate) policy: Arc<AddressPolicy>,
    /// The port this resolver's client connects to, when the client is used for one port only:
    /// then the allowed addresses with that port pass too.
    pub(crate) port: Option<u16>,
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let policy = Arc::clone(&self.policy);
        let port = self.port;
        let host = name.as_str().to_string();
        Box::pin(async move {
            let found = tokio::net::lookup_host((host.as_str(), 0)).await?;
            let mut allowed = Vec::new();
            let mut refused = None;
            for addr in found {
                match policy.check(addr.ip(), port) {
                    Ok(()) => allowed.push(addr),
                    Err(reason) => {
                        refused.get_or_insert((addr.ip(), reason));
                    }
                }
            }
            match refused {
                Some((address, reason)) if allowed.is_empty() => {
                    Err(Box::new(RefusedAddress { host, address, reason }) as Box<dyn StdError + Send + Sync>)
                }
                _ => Ok(Box::new(allowed.into_iter()) as Addrs),
            }
        })
    }
}

/// A host name resolved only to refused addresses.
#[derive(Debug)]
pub(crate) struct RefusedAddress {
    pub(crate) host: String,
    pub(crate) address: IpAddr,
    pub(crate) reason: String,
}

impl fmt::Display for RefusedAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} resolves to {}, {}", self.host, self.address, self.reason)
    }
}

impl StdError for RefusedAddress {}

// ---------------------------------------------------------------------------------------------
// HTTP
