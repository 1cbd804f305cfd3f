internal import CCurl
import Foundation

/// Turns a transport result into a `Failure`, or nil when the response is acceptable.
///
/// `acceptedStatuses` decides which HTTP statuses count as success (default 200–299), so a
/// source that expects 404 gets no failure for it.
public enum FailureClassifier {
    /// The failure `result` stands for, or nil when its status is accepted; a non-zero `curlCode`
    /// is classified by libcurl code and errno.
    public static func classify(_ result: TransferResult, acceptedStatuses: Set<Int>? = nil) -> Failure? {
        if result.curlCode != 0 { return classifyTransport(result) }
        guard let status = result.httpStatus else {
            if result.connectOnly { return nil }  // connected (and shook hands): all that was asked
            return Failure(category: .invalidResponse, reason: "no_status", detail: "no HTTP status received")
        }
        let accepted = acceptedStatuses.map { $0.contains(status) } ?? (200...299).contains(status)
        if accepted { return nil }
        let serverMessage = ServerMessage.extract(from: result.body, contentType: result.header("Content-Type"))
        func failure(_ category: ErrorCategory) -> Failure {
            Failure(category: category, reason: "http_\(status)", httpStatus: status, serverMessage: serverMessage)
        }
        switch status {
        case 408, 504: return failure(.timeout)
        case 429: return failure(.rateLimited)
        case 401, 403: return failure(.authError)
        case 500...599: return failure(.serverError)
        case 400...499: return failure(.clientError)
        default:
            return Failure(
                category: .invalidResponse, reason: "unexpected_status", httpStatus: status,
                detail: "the server answered \(status), which the source does not expect", serverMessage: serverMessage)
        }
    }

    static func classifyTransport(_ result: TransferResult) -> Failure {
        let code = CURLcode(rawValue: UInt32(result.curlCode))
        func failure(_ category: ErrorCategory, _ reason: String) -> Failure {
            Failure(category: category, reason: reason, httpStatus: result.httpStatus, curlCode: result.curlCode, detail: result.curlMessage)
        }
        switch code {
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
            return failure(.networkUnreachable, "dns_failure")
        case CURLE_COULDNT_CONNECT:
            switch result.osErrno {
            case ENETUNREACH: return failure(.networkUnreachable, "network_unreachable")
            case EHOSTUNREACH: return failure(.networkUnreachable, "host_unreachable")
            case ETIMEDOUT: return failure(.timeout, "connect_timeout")
            default: return failure(.transient, "connection_refused")
            }
        case CURLE_OPERATION_TIMEDOUT:
            let connected = result.phases.connect > 0 || result.httpStatus != nil
            return failure(.timeout, connected ? "response_timeout" : "connect_timeout")
        case CURLE_GOT_NOTHING:
            return failure(.transient, "empty_reply")
        case CURLE_SEND_ERROR:
            return failure(.transient, result.osErrno == ECONNRESET ? "connection_reset" : "send_error")
        case CURLE_RECV_ERROR where result.curlMessage.contains("chunked"):
            // The server's chunked framing is broken: it answers the same way next time.
            return failure(.invalidResponse, "malformed_http")
        case CURLE_RECV_ERROR:
            return failure(.transient, result.osErrno == ECONNRESET ? "connection_reset" : "recv_error")
        case CURLE_OUT_OF_MEMORY where result.phases.ttfb > 0 || result.curlMessage.lowercased().contains("header"):
            // Once the answer has begun, this is libcurl refusing response headers past 100 KB
            // (7.88 says only "Out of memory"; later versions name the header).
            var failure = failure(.invalidResponse, "headers_too_large")
            failure.detail = "the server's response headers are larger than 100 KB"
            return failure
        case CURLE_BAD_CONTENT_ENCODING:
            return failure(.invalidResponse, "bad_content_encoding")
        case CURLE_HTTP2, CURLE_HTTP2_STREAM, CURLE_HTTP3:
            return failure(.transient, "http2_error")
        case CURLE_PARTIAL_FILE:
            return failure(.invalidResponse, "truncated")
        case CURLE_WRITE_ERROR where result.exceededSizeLimit:
            return failure(.invalidResponse, "too_large")
        case CURLE_FILESIZE_EXCEEDED:
            return failure(.invalidResponse, "too_large")
        case CURLE_TOO_MANY_REDIRECTS:
            return failure(.clientError, "too_many_redirects")
        case CURLE_UNSUPPORTED_PROTOCOL where result.curlMessage.contains("HTTP/0.9"):
            // The server answered without a status line: a protocol violation, not our URL.
            var failure = failure(.invalidResponse, "http09_response")
            failure.detail = "the server answered without an HTTP status line (HTTP/0.9), which is not allowed"
            return failure
        case CURLE_UNSUPPORTED_PROTOCOL where result.curlMessage.contains("in response"):
            // "Unsupported HTTP version in response": a status line such as `HTTP/1.1 abc`.
            return failure(.invalidResponse, "malformed_http")
        case CURLE_URL_MALFORMAT, CURLE_UNSUPPORTED_PROTOCOL:
            return failure(.clientError, "bad_url")
        case CURLE_USE_SSL_FAILED:
            // STARTTLS asked for and not offered, or refused: the mail server would go on in the clear.
            var failure = failure(.tlsError, "starttls_unavailable")
            failure.detail = "the server does not offer STARTTLS, or refused it"
            return failure
        case CURLE_PEER_FAILED_VERIFICATION:
            let expired = result.curlMessage.lowercased().contains("expired")
            return failure(.tlsError, expired ? "cert_expired" : "cert_invalid")
        case CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CIPHER, CURLE_SSL_CERTPROBLEM, CURLE_SSL_ENGINE_NOTFOUND,
            CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_INVALIDCERTSTATUS,
            CURLE_SSL_CACERT_BADFILE, CURLE_SSL_SHUTDOWN_FAILED:
            return failure(.tlsError, "tls_handshake")
        case CURLE_WEIRD_SERVER_REPLY:
            return failure(.invalidResponse, "malformed_http")
        default:
            return failure(.transient, "curl_\(result.curlCode)")
        }
    }
}

/// Finds the human message in an upstream's error body.
public enum ServerMessage {
    /// `detail`, `message`, `error`, `error_description` of a JSON body, or the start of a text body.
    public static func extract(from body: [UInt8], contentType: String?) -> String? {
        guard !body.isEmpty else { return nil }
        if let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] {
            for key in ["detail", "message", "error_description", "error"] {
                if let text = object[key] as? String, !text.isEmpty { return String(text.prefix(200)) }
                if let nested = object[key] as? [String: Any], let text = nested["message"] as? String {
                    return String(text.prefix(200))
                }
            }
            return nil
        }
        if let contentType, contentType.contains("html") { return nil }
        let text = String(decoding: body.prefix(800), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? nil : String(text.prefix(200))
    }
}
