/// Maps a method and a path to a handler. Patterns are split on `/`; a segment `:name` matches
/// any one segment and captures it, a final `*` matches the rest of the path.
///
/// ```swift
/// var router = Router()
/// router.get("/api/v1/sources/:name") { request in
///     .text(request.pathParameters["name"] ?? "")
/// }
/// ```
/// A path that matches a pattern under another method answers 405 with `Allow`; `HEAD` is served
/// by the `GET` route.
public struct Router: Sendable {
    /// Answers one request; runs in a Swift task, so it may await without holding up the daemon
    /// thread.
    public typealias Handler = @Sendable (HTTPRequest) async -> HTTPResponse
    /// The executor a route's task starts on, asked once per request.
    public typealias ExecutorChoice = @Sendable () -> any TaskExecutor

    enum Segment: Sendable, Equatable {
        case literal(String)
        case parameter(String)
        case rest
    }

    struct Route: Sendable {
        var method: String
        var segments: [Segment]
        var handler: Handler
        var executor: ExecutorChoice?
    }

    enum Match {
        case found(Handler, parameters: [String: String], executor: ExecutorChoice? = nil)
        case methodNotAllowed(allowed: [String])
        case notFound
    }

    private var routes: [Route] = []

    /// No routes: every path is answered 404.
    public init() {}

    /// Adds a route; `method` is upper-cased, and when several routes match, the first added wins.
    /// With `executor`, the request's task starts on (and prefers) the executor it names rather
    /// than the global pool: a handler that mostly waits for work done on that executor (a
    /// transfer loop) then skips a thread hand-off each way.
    public mutating func add(_ method: String, _ pattern: String, executor: ExecutorChoice? = nil, _ handler: @escaping Handler) {
        let segments = Router.split(pattern).map { part -> Segment in
            if part == "*" { return .rest }
            if part.hasPrefix(":") { return .parameter(String(part.dropFirst())) }
            return .literal(String(part))
        }
        routes.append(Route(method: method.uppercased(), segments: segments, handler: handler, executor: executor))
    }

    /// Adds a `GET` route; it serves `HEAD` too.
    public mutating func get(_ pattern: String, executor: ExecutorChoice? = nil, _ handler: @escaping Handler) {
        add("GET", pattern, executor: executor, handler)
    }

    /// Adds a `POST` route; the handler gets the whole body in `HTTPRequest.body`.
    public mutating func post(_ pattern: String, _ handler: @escaping Handler) {
        add("POST", pattern, handler)
    }

    func match(method: String, path: String) -> Match {
        let parts = Router.split(path)
        let wanted = method == "HEAD" ? "GET" : method
        var allowed: [String] = []
        for route in routes {
            guard let parameters = Router.bind(route.segments, to: parts) else { continue }
            if route.method == wanted {
                guard !defaultHeaders.fields.isEmpty else { return .found(route.handler, parameters: parameters, executor: route.executor) }
                let handler = route.handler
                return .found({ [self] request in finishing(await handler(request)) }, parameters: parameters, executor: route.executor)
            }
            if !allowed.contains(route.method) { allowed.append(route.method) }
        }
        if allowed.isEmpty { return .notFound }
        if allowed.contains("GET") && !allowed.contains("HEAD") { allowed.append("HEAD") }
        return .methodNotAllowed(allowed: allowed)
    }

    private static func split(_ path: String) -> [Substring] {
        path.split(separator: "/", omittingEmptySubsequences: true)
    }

    private static func bind(_ segments: [Segment], to parts: [Substring]) -> [String: String]? {
        var parameters: [String: String] = [:]
        for (index, segment) in segments.enumerated() {
            switch segment {
            case .rest:
                parameters["*"] = parts.dropFirst(index).joined(separator: "/")
                return parameters
            case .literal(let literal):
                guard index < parts.count, parts[index] == literal else { return nil }
            case .parameter(let name):
                guard index < parts.count else { return nil }
                parameters[name] = String(parts[index])
            }
        }
        return segments.count == parts.count ? parameters : nil
    }

    /// Answers `request` the way the server does: its handler's response, or 404, or 405 with
    /// `Allow`. The server matches on its own thread; this is for callers without a socket
    /// (fuzzing, tests).
    public func respond(to request: HTTPRequest) async -> HTTPResponse {
        switch match(method: request.method, path: request.path) {
        case .notFound: return finishing(notFound(request.path))
        case .methodNotAllowed(let allowed): return finishing(Router.methodNotAllowed(request.method, request.path, allowed: allowed))
        case .found(let handler, let parameters, _):
            var request = request
            request.pathParameters = parameters
            return await handler(request)
        }
    }

    /// Header fields every response of this router carries (security headers, say), unless the
    /// response sets the field itself.
    public var defaultHeaders: HTTPHeaders = [:]

    /// `response` with `defaultHeaders` added where it has none of its own.
    public func finishing(_ response: HTTPResponse) -> HTTPResponse {
        guard !defaultHeaders.fields.isEmpty else { return response }
        var response = response
        for field in defaultHeaders where response.headers[field.name] == nil { response.headers.set(field.name, field.value) }
        return response
    }

    /// What a path no route matches is answered with; a JSON API can answer in JSON.
    public var notFound: @Sendable (_ path: String) -> HTTPResponse = { path in .text("not found: \(path)\n", status: 404) }

    static func methodNotAllowed(_ method: String, _ path: String, allowed: [String]) -> HTTPResponse {
        var response = HTTPResponse.text("method \(method) not allowed on \(path)\n", status: 405)
        response.headers.set("Allow", allowed.joined(separator: ", "))
        return response
    }
}
