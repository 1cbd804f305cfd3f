internal import CCurl
import Foundation

extension CurlTransport {
    /// Fields that say how to answer, not who asks: sent on every hop. Every other field a
    /// request carries (`X-Api-Key`, `Authorization`, a cookie) goes to its own origin only.
    static let fieldsForAnyOrigin: Set<String> = [
        "accept", "accept-language", "connection", "content-type", "expect", "if-range", "range", "user-agent",
    ]

    /// Whether a redirect to another origin would have to leave out one of the request's fields.
    static func hasOriginOnlyFields(_ request: TransferRequest) -> Bool {
        request.headers.contains { !fieldsForAnyOrigin.contains($0.name.lowercased()) }
    }

    /// The fields sent to `url`: all of them at the request's own origin, elsewhere only those
    /// of `fieldsForAnyOrigin`.
    static func fields(of request: TransferRequest, to url: String, origin: RequestOrigin) -> [(name: String, value: String)] {
        RequestOrigin(url) == origin ? request.headers : request.headers.filter { fieldsForAnyOrigin.contains($0.name.lowercased()) }
    }

    /// The statuses whose `Location` is followed, as libcurl follows them.
    static let redirectStatuses: Set<Int> = [301, 302, 303, 307, 308]

    /// Follows redirects one transfer at a time, so that the request's header fields go to its
    /// own origin (scheme, host and port) and nowhere else, but for `fieldsForAnyOrigin`:
    /// libcurl, following them itself, drops `Authorization` and `Cookie` on the way to another
    /// host but sends every other field it was given, such as an `X-Api-Key`. A 303, and a 301 or 302 answering a POST, turn the
    /// request into a GET without a body (RFC 9110 section 15.4). The hops share the request's
    /// timeout; the result is the last hop's, with the redirects counted and the times of all
    /// hops added up, as libcurl reports them.
    ///
    /// ```swift
    /// var request = TransferRequest(url: "https://api.example.com/v1", headers: [("X-Api-Key", key)])
    /// let result = await transport.perform(request)  // a redirect to cdn.example.net gets no key
    /// ```
    func followingRedirects(_ request: TransferRequest) async -> TransferResult {
        let origin = RequestOrigin(request.url)
        var hop = request
        hop.followRedirects = false
        var result = await performOnce(hop)
        var redirects = 0
        var total = result.totalSeconds
        var phases = result.phases
        while result.curlCode == 0, let status = result.httpStatus, CurlTransport.redirectStatuses.contains(status), let next = result.redirectURL {
            guard redirects < request.maxRedirects else {
                result.curlCode = Int32(CURLE_TOO_MANY_REDIRECTS.rawValue)
                result.curlMessage = "Maximum (\(request.maxRedirects)) redirects followed"
                break
            }
            let left = request.timeout - .milliseconds(Int64((total * 1000).rounded(.up)))
            guard left > .zero else {
                result.curlCode = Int32(CURLE_OPERATION_TIMEDOUT.rawValue)
                result.curlMessage = "Operation timed out after \(request.timeout.totalMilliseconds) milliseconds, \(redirects) redirects followed"
                break
            }
            if Task.isCancelled {
                result.curlCode = Int32(CURLE_ABORTED_BY_CALLBACK.rawValue)
                result.cancelled = true
                break
            }
            redirects += 1
            hop.url = next
            hop.timeout = left
            hop.headers = CurlTransport.fields(of: request, to: next, origin: origin)
            if (status == 303 && hop.method != "HEAD") || ((status == 301 || status == 302) && hop.method == "POST") {
                hop.method = "GET"
                hop.body = nil
            }
            result = await performOnce(hop)
            total += result.totalSeconds
            phases = phases.adding(result.phases)
        }
        result.redirects = redirects
        result.totalSeconds = total
        result.phases = phases
        return result
    }
}

/// A URL's scheme, host and port, compared to tell whether a redirect leaves the origin.
struct RequestOrigin: Equatable {
    var scheme: String
    var host: String
    var port: Int

    /// A URL that does not parse is its own origin: it matches no other URL.
    init(_ url: String) {
        let parts = URLParts(url)
        scheme = parts?.scheme.lowercased() ?? ""
        host = parts?.host?.lowercased() ?? url
        port = parts?.portOrDefault ?? -1
    }
}

extension PhaseTimings {
    /// Both hops' times, phase by phase (redirects are timed summed over their hops).
    public func adding(_ other: PhaseTimings) -> PhaseTimings {
        PhaseTimings(
            dns: dns + other.dns, connect: connect + other.connect, tls: tls + other.tls, ttfb: ttfb + other.ttfb,
            transfer: transfer + other.transfer)
    }
}
