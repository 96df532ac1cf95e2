//! A cluster's brokers and the API versions each supports, as `kafka-broker-api-versions`
//! prints them.

/// A broker, as the cluster's metadata names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerNode {
    pub id: i32,
    pub host: String,
    pub port: i32,
    pub rack: Option<String>,
}

/// Whether kafkit can use an API the broker advertises, and at which version (Kafka's
/// `NodeApiVersions` annotations, for kafkit's own client).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApiUsability {
    /// The highest version both sides speak.
    Usable(i16),
    /// The broker's oldest version is newer than kafkit's newest.
    NodeTooNew,
    /// The broker's newest version is older than kafkit's oldest.
    NodeTooOld,
    /// kafkit never sends this API.
    NotUsed,
}

/// One API of a broker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiVersionSupport {
    pub key: i16,
    /// Kafka's name of the API; `None` for a key kafkit does not know.
    pub name: Option<String>,
    /// The broker's `(min, max)` versions; `None` for an API kafkit sends that the broker does
    /// not advertise.
    pub versions: Option<(i16, i16)>,
    /// `None` for an API kafkit does not know, and for one the broker does not advertise.
    pub usability: Option<ApiUsability>,
}
