/// Settings of a circuit breaker (SPEC section 3, `circuit_breaker`).
public struct CircuitBreakerSettings: Sendable, Equatable {
    /// Consecutive failed calls that open it.
    public var failureThreshold: Int
    /// Consecutive successes in half-open that close it.
    public var successThreshold: Int
    /// The first open period.
    public var openTimeout: Duration
    /// Each failed half-open try doubles the open period, up to this.
    public var openTimeoutMax: Duration
    /// Every open period is spread over ±jitter of itself.
    public var jitter: Double
    /// Calls let through at once while half-open.
    public var halfOpenMaxCalls: Int
    /// Whether a 429 counts against the upstream. A notification receiver that answers 429
    /// is up and asking to be called later, which the caller does (Retry-After); the breaker
    /// then leaves it alone (`false`), neither a failure nor a success.
    public var rateLimitTrips: Bool

    /// Settings with SPEC's defaults: open after 5 failures, close after 2 successes, open 60 s
    /// doubling up to 600 s, ±30% jitter, one half-open trial call.
    public init(
        failureThreshold: Int = 5, successThreshold: Int = 2, openTimeout: Duration = .seconds(60),
        openTimeoutMax: Duration = .seconds(600), jitter: Double = 0.3, halfOpenMaxCalls: Int = 1,
        rateLimitTrips: Bool = true
    ) {
        self.failureThreshold = failureThreshold
        self.successThreshold = successThreshold
        self.openTimeout = openTimeout
        self.openTimeoutMax = openTimeoutMax
        self.jitter = jitter
        self.halfOpenMaxCalls = halfOpenMaxCalls
        self.rateLimitTrips = rateLimitTrips
    }
}

/// The states of a breaker; `forcedOpen` and `disabled` are set by an operator.
public enum BreakerState: String, Sendable, CaseIterable, Codable {
    case closed
    case open
    case halfOpen = "half_open"
    case forcedOpen = "forced_open"
    case disabled

    /// Calls are held back (a half-open breaker lets only its trial calls through): what
    /// "breaker open" means in the alert rules, so a breaker cycling between open and
    /// half-open during an outage does not flap them.
    public var isOpen: Bool {
        self == .open || self == .halfOpen || self == .forcedOpen
    }
}

/// One change of state, for the store and the metrics.
public struct BreakerTransition: Sendable, Equatable {
    /// The state the breaker left.
    public var from: BreakerState
    /// The state the breaker entered.
    public var to: BreakerState
    /// When it happened, in milliseconds since 1970 (the client's `nowMs` clock).
    public var atMs: Int64
    /// The consecutive failures counted when it happened (0 when the breaker closes).
    public var consecutiveFailures: Int
    /// The open period that starts with this transition (0 unless it opens the breaker).
    public var openTimeoutMs: Int64

    /// Creates a transition; `openTimeoutMs` is 0 unless it opens the breaker.
    public init(from: BreakerState, to: BreakerState, atMs: Int64, consecutiveFailures: Int, openTimeoutMs: Int64) {
        self.from = from
        self.to = to
        self.atMs = atMs
        self.consecutiveFailures = consecutiveFailures
        self.openTimeoutMs = openTimeoutMs
    }
}

/// What a breaker keeps across restarts (the `breaker_state` table).
public struct PersistedBreaker: Sendable, Equatable, Codable {
    /// The saved state; a saved `halfOpen` is restored as `open`.
    public var state: BreakerState
    /// Calls in a row that failed in a way that trips the breaker.
    public var consecutiveFailures: Int
    /// Successful half-open calls in a row; dropped on restore when the saved state is half-open.
    public var consecutiveSuccesses: Int
    /// When the breaker last opened, in milliseconds since 1970; nil while closed or disabled.
    public var openedAtMs: Int64?
    /// When an open breaker next lets a trial call through (ms since 1970); nil while closed,
    /// disabled or forced open.
    public var nextAttemptAtMs: Int64?
    /// Times the breaker has opened on failures; never reset.
    public var openCount: Int
    /// The unjittered open period the next failed half-open try doubles.
    public var openTimeoutMs: Int64

    /// Creates a saved breaker; made by `CircuitBreaker.persisted` and the `breaker_state` reader.
    public init(
        state: BreakerState, consecutiveFailures: Int, consecutiveSuccesses: Int, openedAtMs: Int64?,
        nextAttemptAtMs: Int64?, openCount: Int, openTimeoutMs: Int64
    ) {
        self.state = state
        self.consecutiveFailures = consecutiveFailures
        self.consecutiveSuccesses = consecutiveSuccesses
        self.openedAtMs = openedAtMs
        self.nextAttemptAtMs = nextAttemptAtMs
        self.openCount = openCount
        self.openTimeoutMs = openTimeoutMs
    }
}

/// What the breaker says about one call.
public enum BreakerPermission: Sendable, Equatable {
    case permitted
    /// Not permitted; the breaker's next half-open try is at this time (nil: operator's choice).
    case rejected(nextAttemptAtMs: Int64?)
}

/// A circuit breaker as a value-type state machine. It takes the time (milliseconds since 1970)
/// and a random number as inputs and returns transitions, so tests drive it with a manual clock.
///
/// ```
///            failures ≥ threshold              open period over
///  closed ───────────────────────────▶ open ───────────────────▶ half_open
///    ▲                                  ▲                           │
///    │  successes ≥ success_threshold   │   any failure (period ×2) │
///    └──────────────────────────────────┴───────────────────────────┘
/// ```
/// The breaker sees each call's final outcome: the retries of a call happen inside one permission.
/// Only failures that say the upstream is unavailable trip it; client errors, invalid responses,
/// auth and policy refusals count as answers.
public struct CircuitBreaker: Sendable, Equatable {
    /// Thresholds and open periods; `ResilientClient.configure` replaces them, keeping the state.
    public var settings: CircuitBreakerSettings
    /// The current state; only the mutating methods change it, each returning its transitions.
    public private(set) var state: BreakerState = .closed
    /// Tripping failures in a row; any other outcome while closed resets it, and so does closing.
    public private(set) var consecutiveFailures = 0
    /// Successes in a row while half-open; `successThreshold` of them close the breaker.
    public private(set) var consecutiveSuccesses = 0
    /// When it last opened or was forced open (ms since 1970); nil while closed or disabled.
    public private(set) var openedAtMs: Int64?
    /// When an open breaker next lets a trial call through (ms since 1970); nil while closed,
    /// disabled or forced open.
    public private(set) var nextAttemptAtMs: Int64?
    /// Times the breaker has opened from closed on failures (a failed half-open try is the same
    /// opening; forcing it open does not count); never reset.
    public private(set) var openCount = 0
    /// Calls refused while open, forced open, or half-open with its trial calls taken; never reset.
    public private(set) var notPermittedCalls = 0
    private var openTimeoutMs: Int64
    private var halfOpenInFlight = 0

    /// A closed breaker with no history.
    public init(settings: CircuitBreakerSettings = .init()) {
        self.settings = settings
        self.openTimeoutMs = settings.openTimeout.totalMilliseconds
    }

    /// Restores a persisted breaker. A breaker that was half-open is open again until its next try.
    public init(settings: CircuitBreakerSettings, restoring saved: PersistedBreaker) {
        self.init(settings: settings)
        state = saved.state == .halfOpen ? .open : saved.state
        consecutiveFailures = saved.consecutiveFailures
        consecutiveSuccesses = saved.state == .halfOpen ? 0 : saved.consecutiveSuccesses
        openedAtMs = saved.openedAtMs
        nextAttemptAtMs = saved.nextAttemptAtMs
        openCount = saved.openCount
        openTimeoutMs = max(settings.openTimeout.totalMilliseconds, min(saved.openTimeoutMs, settings.openTimeoutMax.totalMilliseconds))
        if state == .open && nextAttemptAtMs == nil { nextAttemptAtMs = openedAtMs ?? 0 }
    }

    /// Whether an upstream failure of this category counts against the upstream.
    public static func trips(_ category: ErrorCategory) -> Bool {
        switch category {
        case .transient, .timeout, .networkUnreachable, .serverError, .rateLimited, .tlsError: return true
        case .clientError, .invalidResponse, .authError, .insecureBlocked, .circuitOpen: return false
        }
    }

    /// Asks to make a call; may move an open breaker whose period is over to half-open. A `trial`
    /// call (a monitor's scheduled probe, which must keep looking) is the half-open try whenever
    /// it comes: the open period then holds back every other call, and the retries of the trial.
    public mutating func acquirePermission(nowMs: Int64, trial: Bool = false) -> (BreakerPermission, [BreakerTransition]) {
        var transitions: [BreakerTransition] = []
        switch state {
        case .closed, .disabled:
            return (.permitted, [])
        case .forcedOpen:
            notPermittedCalls += 1
            return (.rejected(nextAttemptAtMs: nil), [])
        case .open:
            guard trial || nextAttemptAtMs.map({ nowMs >= $0 }) == true else {
                notPermittedCalls += 1
                return (.rejected(nextAttemptAtMs: nextAttemptAtMs), [])
            }
            transitions.append(move(to: .halfOpen, nowMs: nowMs))
            consecutiveSuccesses = 0
            halfOpenInFlight = 0
            fallthrough
        case .halfOpen:
            guard halfOpenInFlight < settings.halfOpenMaxCalls else {
                notPermittedCalls += 1
                return (.rejected(nextAttemptAtMs: nextAttemptAtMs), transitions)
            }
            halfOpenInFlight += 1
            return (.permitted, transitions)
        }
    }

    /// Records a permitted call's final outcome: nil for success, or the failure's category.
    /// `countsAsFailure: false` records a failure that must not trip the breaker (Lookout offline).
    public mutating func record(
        failure category: ErrorCategory?, nowMs: Int64, random: Double, countsAsFailure: Bool = true
    ) -> [BreakerTransition] {
        let counted = countsAsFailure && (settings.rateLimitTrips || category != .rateLimited)
        let failed = category.map { CircuitBreaker.trips($0) && counted } ?? false
        let neutral = category != nil && !failed && !counted
        switch state {
        case .closed:
            if neutral { return [] }
            guard failed else {
                consecutiveFailures = 0
                return []
            }
            consecutiveFailures += 1
            guard consecutiveFailures >= settings.failureThreshold else { return [] }
            openTimeoutMs = settings.openTimeout.totalMilliseconds
            return [open(nowMs: nowMs, random: random)]
        case .halfOpen:
            halfOpenInFlight = max(0, halfOpenInFlight - 1)
            if neutral { return [] }
            guard failed else {
                consecutiveSuccesses += 1
                guard consecutiveSuccesses >= settings.successThreshold else { return [] }
                consecutiveFailures = 0
                openTimeoutMs = settings.openTimeout.totalMilliseconds
                openedAtMs = nil
                nextAttemptAtMs = nil
                return [move(to: .closed, nowMs: nowMs)]
            }
            consecutiveFailures += 1
            openTimeoutMs = min(openTimeoutMs * 2, settings.openTimeoutMax.totalMilliseconds)
            return [open(nowMs: nowMs, random: random)]
        case .open, .forcedOpen, .disabled:
            return []  // a late result of a call permitted earlier
        }
    }

    /// Operator: close the breaker and forget its history.
    public mutating func reset(nowMs: Int64) -> [BreakerTransition] {
        consecutiveFailures = 0
        consecutiveSuccesses = 0
        openTimeoutMs = settings.openTimeout.totalMilliseconds
        openedAtMs = nil
        nextAttemptAtMs = nil
        halfOpenInFlight = 0
        return state == .closed ? [] : [move(to: .closed, nowMs: nowMs)]
    }

    /// Operator: refuse every call until reset.
    public mutating func forceOpen(nowMs: Int64) -> [BreakerTransition] {
        guard state != .forcedOpen else { return [] }
        openedAtMs = nowMs
        nextAttemptAtMs = nil
        return [move(to: .forcedOpen, nowMs: nowMs)]
    }

    /// Operator: permit every call and record nothing until reset.
    public mutating func disable(nowMs: Int64) -> [BreakerTransition] {
        guard state != .disabled else { return [] }
        openedAtMs = nil
        nextAttemptAtMs = nil
        return [move(to: .disabled, nowMs: nowMs)]
    }

    /// How long the breaker has held calls back so far: since it opened, through half-open trials
    /// (0 while closed or disabled).
    public func openDurationMs(nowMs: Int64) -> Int64 {
        guard state == .open || state == .forcedOpen || state == .halfOpen, let openedAtMs else { return 0 }
        return max(0, nowMs - openedAtMs)
    }

    /// The state to save across restarts, including the private unjittered open period.
    public var persisted: PersistedBreaker {
        PersistedBreaker(
            state: state, consecutiveFailures: consecutiveFailures, consecutiveSuccesses: consecutiveSuccesses,
            openedAtMs: openedAtMs, nextAttemptAtMs: nextAttemptAtMs, openCount: openCount, openTimeoutMs: openTimeoutMs)
    }

    private mutating func open(nowMs: Int64, random: Double) -> BreakerTransition {
        let jitter = min(max(settings.jitter, 0), 1)
        let period = Int64((Double(openTimeoutMs) * (1 + jitter * (2 * random - 1))).rounded())
        // A failed half-open try continues the same opening: its count and start stay (trials
        // may come every probe interval).
        if state != .halfOpen || openedAtMs == nil {
            openedAtMs = nowMs
            openCount += 1
        }
        nextAttemptAtMs = nowMs + max(0, period)
        consecutiveSuccesses = 0
        halfOpenInFlight = 0
        var transition = move(to: .open, nowMs: nowMs)
        transition.openTimeoutMs = period
        return transition
    }

    private mutating func move(to next: BreakerState, nowMs: Int64) -> BreakerTransition {
        let transition = BreakerTransition(
            from: state, to: next, atMs: nowMs, consecutiveFailures: consecutiveFailures, openTimeoutMs: 0)
        state = next
        return transition
    }
}
