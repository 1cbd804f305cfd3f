/// How the client treats one upstream (in Lookout: one source).
public struct UpstreamPolicy: Sendable, Equatable {
    public var retry: RetryPolicy
    public var retryBudgetRatio: Double
    public var retryBudgetMinPerMinute: Int
    public var breaker: CircuitBreakerSettings
    /// Requests a second and burst; nil: unlimited.
    public var rateLimit: RateLimitSettings?
    /// Refuse plain http:// (`insecure_blocked/plain_http_refused`).
    public var requireHTTPS: Bool
    /// With `requireHTTPS`: try the https:// URL instead, and report the upgrade.
    public var upgradeToHTTPS: Bool
    public var auth: AuthMethod?

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
    public var perSecond: Double
    public var burst: Double

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

public struct OAuth2ClientCredentials: Sendable, Equatable {
    public var tokenURL: String
    public var clientID: String
    public var clientSecret: String
    public var scopes: [String]

    public init(tokenURL: String, clientID: String, clientSecret: String, scopes: [String] = []) {
        self.tokenURL = tokenURL
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.scopes = scopes
    }
}

/// One call: the request, what counts as success, and how long the whole call may take.
public struct CallRequest: Sendable {
    public var transfer: TransferRequest
    /// nil: 200–299.
    public var acceptedStatuses: Set<Int>?
    /// Retries stop before this much time has passed since the call began.
    public var deadline: Duration
    /// Checks a response the status accepted (JSON validity, a feed's items...).
    public var validate: (@Sendable (TransferResult) -> Failure?)?
    /// Identical GETs in flight at once share one call.
    public var singleFlight: Bool

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
