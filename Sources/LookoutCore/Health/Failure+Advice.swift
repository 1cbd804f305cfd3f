import ResilientHTTP

// The words an on-call engineer reads about a failure: a title and what to do. They name
// Lookout's own behaviour ("Lookout retries with backoff"), so they live here, above the
// HTTP client, which only classifies.

extension ErrorCategory {
    /// A short title for the status page and alerts.
    package var title: String {
        switch self {
        case .transient: return "Connection failed"
        case .timeout: return "Timed out"
        case .networkUnreachable: return "Network unreachable"
        case .serverError: return "Upstream server error"
        case .rateLimited: return "Rate limited by upstream"
        case .authError: return "Not authorised"
        case .clientError: return "Request rejected"
        case .tlsError: return "TLS problem"
        case .insecureBlocked: return "Insecure URL blocked"
        case .invalidResponse: return "Unexpected response"
        case .circuitOpen: return "Paused by circuit breaker"
        }
    }

    /// What an on-call engineer can do about it.
    package var recoverySuggestion: String {
        switch self {
        case .transient:
            return "Lookout retries with backoff; if it persists, check that the upstream host is up and accepting connections."
        case .timeout:
            return "Lookout retries; if it persists, check the upstream's load or raise the source's timeout."
        case .networkUnreachable:
            return "Check DNS and the network path from this host; Lookout checks its own connectivity before blaming the source."
        case .serverError:
            return "The upstream is failing; Lookout retries with backoff. Check the upstream's status page or logs."
        case .rateLimited:
            return "Lookout waits for the reset time; lower the source's rate if this repeats."
        case .authError:
            return "Check the source's credentials (token file or OAuth2 client); Lookout refreshed the token once."
        case .clientError:
            return "Check the source's URL, method and headers in the config; retrying will not help."
        case .tlsError:
            return "Check the upstream's certificate (expiry, host name, chain); retrying will not help."
        case .insecureBlocked:
            return "Use an https:// URL, or set upgrade_to_https: true for this source."
        case .invalidResponse:
            return "The upstream answered, but not as expected; check the source's expectations against what it now returns."
        case .circuitOpen:
            return "Lookout stopped calling this source after repeated failures and will try again when the open period ends."
        }
    }
}

extension Failure {
    /// A short title: the category's, or a more exact one where the reason says more.
    package var title: String {
        switch reason {
        case "slow_response": return "Slow response"
        case "too_many_redirects": return "Too many redirects"
        case "redirect_not_allowed": return "Redirect not allowed"
        case "http09_response", "malformed_http": return "Not an HTTP answer"
        default: return category.title
        }
    }

    /// What an on-call engineer can do about it: the category's advice, or advice for the reason.
    package var recoverySuggestion: String {
        switch reason {
        case "slow_response":
            return "The upstream answered, but slower than the source's max_latency allows; check its load, or raise max_latency if this is its normal speed."
        case "too_many_redirects":
            return "The URL redirects in a loop or through too many hops; point the source at the final URL."
        case "starttls_unavailable":
            return "The server would go on in the clear: turn TLS on there, or check that the URL names the right port and protocol."
        case "http_401" where detail == Failure.noCredentials:
            return "The upstream wants credentials and the source has none: add auth (bearer_token_file or oauth2) to the source."
        default:
            return category.recoverySuggestion
        }
    }
}
