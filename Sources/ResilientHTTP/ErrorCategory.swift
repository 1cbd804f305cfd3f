/// What to do about a failed attempt. Each category has its own retry rule (SPEC section 4).
public enum ErrorCategory: String, Sendable, CaseIterable, Codable {
    case transient
    case timeout
    case networkUnreachable = "network_unreachable"
    case serverError = "server_error"
    case rateLimited = "rate_limited"
    case authError = "auth_error"
    case clientError = "client_error"
    case tlsError = "tls_error"
    case insecureBlocked = "insecure_blocked"
    case invalidResponse = "invalid_response"
    case circuitOpen = "circuit_open"

    /// Whether a retry may help.
    public var isRetryable: Bool {
        switch self {
        case .transient, .timeout, .networkUnreachable, .serverError, .rateLimited: return true
        case .authError, .clientError, .tlsError, .insecureBlocked, .invalidResponse, .circuitOpen: return false
        }
    }
}

/// One failed attempt or call, classified.
public struct Failure: Sendable, Equatable, Error {
    /// Decides the retry rule and whether the breaker counts the failure.
    public var category: ErrorCategory
    /// What happened, e.g. `connection_refused`, `http_503`, `json_invalid`.
    public var reason: String
    /// The response's status when one arrived; nil for failures before any response.
    public var httpStatus: Int?
    /// libcurl's result code for a transport failure; nil when a response was classified.
    public var curlCode: Int32?
    /// The technical detail (libcurl's message, the assertion that failed).
    public var detail: String
    /// A message the upstream put in its error body, if any.
    public var serverMessage: String?
    /// Where in a larger operation it happened ("step 2 of 3, create-order"), said first.
    public var context: String?

    /// Creates a failure; `detail` is cut to 1000 characters, and it and `serverMessage` are made
    /// printable.
    public init(
        category: ErrorCategory, reason: String, httpStatus: Int? = nil, curlCode: Int32? = nil,
        detail: String = "", serverMessage: String? = nil
    ) {
        self.category = category
        self.reason = reason
        self.httpStatus = httpStatus
        self.curlCode = curlCode
        // Both may carry an upstream's bytes: made printable once, here, for every reader.
        self.detail = PrintableText.escape(detail.count > 1000 ? detail.prefix(1000) + "…" : detail)
        self.serverMessage = serverMessage.map(PrintableText.escape)
    }

    /// The failure with each of `secrets` (4 characters or more) replaced by `[redacted]` in
    /// what it says: an upstream that repeats a token in its error must not get it stored.
    public func hiding(_ secrets: [String]) -> Failure {
        var failure = self
        for secret in secrets where secret.count >= 4 {
            failure.detail = failure.detail.replacingOccurrences(of: secret, with: "[redacted]")
            failure.serverMessage = failure.serverMessage?.replacingOccurrences(of: secret, with: "[redacted]")
        }
        return failure
    }

    /// What a 401 from a source without credentials says in `detail`.
    public static let noCredentials = "the source has no credentials configured"

    /// The user-facing message, e.g. "Error while probing acme: the server answered 503.", with the
    /// server's own message appended when it sent one.
    public func message(operation: String) -> String {
        "Error while \(operation): \(whatHappened)"
    }

    /// The message without whose call it was, for a line that already names the source: "the
    /// server answered 503. The server said: down for maintenance".
    public var whatHappened: String {
        let said = context.map { "\($0): \(explanation)" } ?? explanation
        guard let serverMessage, !serverMessage.isEmpty else { return said }
        return said + " The server said: \(serverMessage)"
    }

    private var explanation: String {
        switch category {
        case .transient: return "the connection failed (\(reason.replacingOccurrences(of: "_", with: " ")))."
        case .timeout:
            if let httpStatus { return "the upstream answered \(httpStatus) (timeout)." }
            return reason == "connect_timeout" ? "no connection could be made in time." : "no complete answer arrived in time."
        case .networkUnreachable:
            return reason == "dns_failure"
                ? "the host name could not be resolved." : "the host could not be reached (\(reason.replacingOccurrences(of: "_", with: " ")))."
        case .serverError, .authError, .clientError, .rateLimited:
            if reason == "too_many_redirects" {
                return "the server kept redirecting" + (httpStatus.map { " (the last answer was \($0))" } ?? "") + "."
            }
            if !reason.hasPrefix("http_"), !detail.isEmpty { return "\(detail)." }
            if let httpStatus { return "the server answered \(httpStatus)" + (detail.isEmpty ? "." : " (\(detail)).") }
            return "\(reason.replacingOccurrences(of: "_", with: " "))."
        case .tlsError:
            // What the TLS library or the server said (an untrusted issuer, a PostgreSQL server
            // that offers no TLS) is what the reader acts on.
            let said = detail.hasSuffix(".") ? String(detail.dropLast()) : detail
            return "the TLS connection failed (\(reason.replacingOccurrences(of: "_", with: " ")))" + (said.isEmpty ? "." : ": \(said).")
        case .insecureBlocked: return "plain http:// is not allowed for this source."
        case .invalidResponse: return detail.isEmpty ? "the response was not as expected (\(reason))." : "\(detail)."
        case .circuitOpen: return "the circuit breaker is open, so no request was made."
        }
    }
}
