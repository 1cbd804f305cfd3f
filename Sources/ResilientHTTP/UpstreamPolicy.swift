/// How the client treats one upstream (in Lookout: one source).
public struct UpstreamPolicy: Sendable, Equatable {
    /// The retry rule of each error category.
    public var retry: RetryPolicy
    /// Retries allowed per call over the last minute (see `RetryBudget`).
    public var retryBudgetRatio: Double
    /// Retries allowed each minute, whatever the number of calls.
    public var retryBudgetMinPerMinute: Int
    /// The circuit breaker's thresholds and open periods.
    public var breaker: CircuitBreakerSettings
    /// Requests a second and burst; nil: unlimited.
    public var rateLimit: RateLimitSettings?
    /// Refuse plain http:// (`insecure_blocked/plain_http_refused`).
    public var requireHTTPS: Bool
    /// With `requireHTTPS`: try the https:// URL instead, and report the upgrade.
    public var upgradeToHTTPS: Bool
    /// Credentials sent as `Authorization: Bearer`; nil sends none.
    public var auth: AuthMethod?

    /// Defaults: standard retries, a 20% retry budget (at least 3 a minute), 5 requests a second in
    /// bursts of 10, plain http allowed, no auth.
    public init(
        retry: RetryPolicy = .standard, retryBudgetRatio: Double = 0.2, retryBudgetMinPerMinute: Int = 3,
        breaker: CircuitBreakerSettings = .init(), rateLimit: RateLimitSettings? = RateLimitSettings(),
        requireHTTPS: Bool = false, upgradeToHTTPS: Bool = false, auth: AuthMethod? = nil
    ) {
        self.retry = retry
        self.retryBudgetRatio = retryBudgetRatio
        self.retryBudgetMinPerMinute = retryBudgetMinPerMinute
        self.breaker = breaker
        self.rateLimit = rateLimit
        self.requireHTTPS = requireHTTPS
        self.upgradeToHTTPS = upgradeToHTTPS
        self.auth = auth
    }
}

/// A token bucket's rate and burst.
public struct RateLimitSettings: Sendable, Equatable {
    /// Requests allowed per second, on average.
    public var perSecond: Double
    /// Requests allowed at once after a quiet period.
    public var burst: Double

    /// 5 requests a second, in bursts of up to 10, unless told otherwise.
    public init(perSecond: Double = 5, burst: Double = 10) {
        self.perSecond = perSecond
        self.burst = burst
    }
}

/// How calls to an upstream authenticate.
public enum AuthMethod: Sendable, Equatable {
    /// `Authorization: Bearer <file contents>`; the file is read again when the upstream says 401.
    case bearerTokenFile(path: String)
    /// `Authorization: Bearer <token>` with a fixed token.
    case bearerToken(String)
    /// OAuth 2.0 client credentials (RFC 6749 §4.4).
    case oauth2(OAuth2ClientCredentials)
}

/// An OAuth 2.0 client: its token comes from POSTing a `client_credentials` grant to `tokenURL`.
public struct OAuth2ClientCredentials: Sendable, Equatable {
    /// The token endpoint; the client ID and secret go in the form body, not in `Authorization`.
    public var tokenURL: String
    /// Sent as `client_id`.
    public var clientID: String
    /// Sent as `client_secret`.
    public var clientSecret: String
    /// Joined with spaces into `scope`; empty sends no `scope`.
    public var scopes: [String]
    /// More form fields for the token endpoint (`audience`, `resource`…), sent in name order.
    public var endpointParams: [String: String]
    /// How the token request connects: whom it trusts and which proxy it goes through.
    public var connection = TokenConnection()

    /// Creates credentials; no scopes or other fields unless given.
    public init(tokenURL: String, clientID: String, clientSecret: String, scopes: [String] = [], endpointParams: [String: String] = [:]) {
        self.tokenURL = tokenURL
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.scopes = scopes
        self.endpointParams = endpointParams
    }
}

/// How an OAuth 2 token request connects (prometheus/common's `oauth2.tls_config` and
/// `oauth2.proxy_url`); by default as any other request.
public struct TokenConnection: Sendable, Equatable {
    /// PEM certificates trusted instead of the system's.
    public var caFile: String?
    public var skipsCertificateVerification = false
    /// Lowest and highest TLS minor version (2 for TLS 1.2).
    public var tlsMinimumMinor: Int?
    public var tlsMaximumMinor: Int?
    /// A client certificate and its key, PEM files.
    public var clientCertificateFile: String?
    public var clientKeyFile: String?
    /// The name checked against the certificate (and sent as SNI) instead of the URL's host.
    public var serverName: String?
    /// nil: libcurl's own reading of `https_proxy` and the like; "": no proxy.
    public var proxy: String?

    /// Settings as for any other request.
    public init() {}

    func apply(to request: inout TransferRequest) {
        request.caFile = caFile
        request.skipsCertificateVerification = skipsCertificateVerification
        request.tlsMinimumMinor = tlsMinimumMinor
        request.tlsMaximumMinor = tlsMaximumMinor
        if let clientCertificateFile, let clientKeyFile { request.clientCertificate = (clientCertificateFile, clientKeyFile) }
        request.tlsServerName = serverName
        request.proxy = proxy
    }
}

/// One call: the request, what counts as success, and how long the whole call may take.
public struct CallRequest: Sendable {
    /// What each attempt sends; the client may upgrade its URL to https and adds the bearer token.
    public var transfer: TransferRequest
    /// nil: 200–299.
    public var acceptedStatuses: Set<Int>?
    /// Retries stop before this much time has passed since the call began.
    public var deadline: Duration
    /// Checks a response the status accepted (JSON validity, a feed's items...).
    public var validate: (@Sendable (TransferResult) -> Failure?)?
    /// Identical GETs in flight at once share one call.
    public var singleFlight: Bool
    /// A call that must be made on its schedule whatever the breaker says (a monitor's probe):
    /// while the breaker is open it is the half-open trial, one attempt without retries, so a
    /// recovery is seen at the next call, not at the end of an open period of up to
    /// `open_timeout_max`. A forced-open breaker still refuses it.
    public var breakerTrial = false
    /// Values that must not be kept or shown (what a flow captured): an upstream's answer that
    /// repeats one has it replaced before the failure is reported.
    public var secrets: [String] = []

    /// A call whose deadline defaults to six times the transfer's timeout; identical GETs share one
    /// call unless `singleFlight` is false.
    public init(
        _ transfer: TransferRequest, acceptedStatuses: Set<Int>? = nil, deadline: Duration? = nil,
        validate: (@Sendable (TransferResult) -> Failure?)? = nil, singleFlight: Bool = true
    ) {
        self.transfer = transfer
        self.acceptedStatuses = acceptedStatuses
        self.deadline = deadline ?? transfer.timeout * 6
        self.validate = validate
        self.singleFlight = singleFlight
    }
}
