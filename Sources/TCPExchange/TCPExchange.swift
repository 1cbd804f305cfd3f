import ClientSocket
import LinearRegex

#if canImport(Glibc)
    import Glibc
#endif

/// A line-based conversation with a TCP server — blackbox_exporter's `query_response`: expect a
/// line matching a regular expression (what it captured may be sent back, `${1}`), send a line,
/// upgrade to TLS (STARTTLS) — in TLS from the start if asked, on `BlockingCall`'s threads, with
/// every call bounded by one deadline. Knows nothing of Lookout.
///
/// ```swift
/// let outcome = await TCPExchange.run(host: "127.0.0.1", port: 25, steps: [.init(expect: "^220 ")], timeout: .seconds(5))
/// print(outcome.problem ?? "ok")
/// ```
public enum TCPExchange {
    /// One exchange: a line to wait for, then a line to send (either may be absent), then, with
    /// `startTLS`, a TLS handshake on the connection; what follows is read and sent over TLS.
    public struct Step: Sendable {
        public var expect: String?
        public var send: String?
        public var startTLS: Bool

        public init(expect: String? = nil, send: String? = nil, startTLS: Bool = false) {
            self.expect = expect
            self.send = send
            self.startTLS = startTLS
        }
    }

    public struct Outcome: Sendable {
        /// The address connected to, as text; nil when no connection was made.
        public var peer: String?
        /// Seconds spent resolving the host.
        public var resolveSeconds: Double = 0
        /// What went wrong, for people; nil when every step passed.
        public var problem: String?
        /// What kind of problem: `resolve`, `refused`, `timeout`, `closed`, `regex`, `io`, `tls`
        /// (the handshake failed), `tls_certificate` (on the certificate), `tls_expired` (on its
        /// validity period), `starttls_unavailable`, `protocol` (an answer no such server gives),
        /// `line_too_long` (a line past `maxLine`), `answer_too_large` (past `maxRead` without
        /// the line), `send_too_large` (an expanded `send` past `maxSend`).
        public var reason: String?
        /// The TLS handshake that completed (from the start, or the last STARTTLS).
        public var tls: TLSHandshake?
        /// An `expect` found no matching line before the connection ended.
        public var failedDueToRegex = false
        public var ipVersion: Int?

        mutating func fail(_ failure: SocketFailure) {
            problem = failure.message
            reason = failure.reason
        }
    }

    /// A line longer than this ends the conversation (a peer that sends an endless line).
    public static let maxLine = 64 << 10
    /// At most this much is read over the whole conversation (an endless banner).
    public static let maxRead = 1 << 20
    /// A `send` with its `${1}` references expanded is at most this long: a capture repeated
    /// thousands of times would otherwise build hundreds of megabytes for one probe.
    public static let maxSend = 64 << 10

    /// - Parameters:
    ///   - source: the local address to connect from (an IP literal), or any.
    ///   - tls: how TLS is set up, for a step's `startTLS` and for `tlsFromStart`.
    ///   - tlsFromStart: shake hands as soon as the connection is made (blackbox's `tls: true`).
    public static func run(
        host: String, port: UInt16, steps: [Step], timeout: Duration, preferIPv6: Bool = false, source: String? = nil, tls: TLSSettings = TLSSettings(),
        tlsFromStart: Bool = false
    ) async -> Outcome {
        await BlockingCall.run {
            perform(host: host, port: port, steps: steps, timeout: timeout, preferIPv6: preferIPv6, source: source, tls: tls, tlsFromStart: tlsFromStart)
        }
    }

    /// PostgreSQL's way to TLS: an `SSLRequest`, answered `S` (then the handshake) or `N` (the
    /// server offers no TLS: reason `starttls_unavailable`); anything else is no PostgreSQL
    /// server (reason `protocol`).
    public static func postgresTLS(host: String, port: UInt16, timeout: Duration, tls: TLSSettings = TLSSettings()) async -> Outcome {
        await BlockingCall.run {
            var outcome = Outcome()
            if let connection = connect(host: host, port: port, timeout: timeout, preferIPv6: false, source: nil, outcome: &outcome) {
                postgresHandshake(connection, host: host, settings: tls, outcome: &outcome)
            }
            return outcome
        }
    }

    /// The `SSLRequest` message: its length (8) and the request code 80877103.
    static let sslRequest: [UInt8] = [0, 0, 0, 8, 0x04, 0xD2, 0x16, 0x2F]

    static func postgresHandshake(_ connection: ClientConnection, host: String, settings: TLSSettings, outcome: inout Outcome) {
        if let failure = connection.write(sslRequest) { return outcome.fail(failure) }
        var answer = [UInt8](repeating: 0, count: 1)
        switch connection.read(&answer) {
        case .data where answer[0] == UInt8(ascii: "S"):
            if let failure = connection.startTLS(host: host, settings: settings) { return outcome.fail(failure) }
            outcome.tls = connection.handshake
        case .data where answer[0] == UInt8(ascii: "N"):
            outcome.problem = "the PostgreSQL server offers no TLS (it answered N to SSLRequest)"
            outcome.reason = "starttls_unavailable"
        case .data:
            let byte = String(answer[0], radix: 16, uppercase: true)
            outcome.problem =
                "the server answered SSLRequest with the byte 0x\(byte.count == 1 ? "0" + byte : byte), where a PostgreSQL server answers S or N"
            outcome.reason = "protocol"
        case .closed:
            outcome.problem = "the server closed the connection instead of answering SSLRequest"
            outcome.reason = "closed"
        case .timedOut:
            outcome.problem = "no answer to SSLRequest in time"
            outcome.reason = "timeout"
        }
    }

    /// The connection, its address and resolving time noted in `outcome`; nil (and the problem
    /// noted) when none was made.
    static func connect(host: String, port: UInt16, timeout: Duration, preferIPv6: Bool, source: String?, outcome: inout Outcome) -> ClientConnection? {
        var attempt = ClientConnection.Attempt()
        let opened = ClientConnection.open(
            host: host, port: port, preferIPv6: preferIPv6, source: source, deadline: ContinuousClock.now + timeout, attempt: &attempt)
        outcome.resolveSeconds = attempt.resolveSeconds
        outcome.peer = attempt.peer
        outcome.ipVersion = attempt.ipVersion
        switch opened {
        case .success(let connection): return connection
        case .failure(let failure):
            outcome.fail(failure)
            return nil
        }
    }

    static func perform(
        host: String, port: UInt16, steps: [Step], timeout: Duration, preferIPv6: Bool, source: String? = nil, tls settings: TLSSettings = TLSSettings(),
        tlsFromStart: Bool = false
    ) -> Outcome {
        var outcome = Outcome()
        func failed(_ failure: SocketFailure) -> Outcome {
            outcome.fail(failure)
            return outcome
        }
        guard let connection = connect(host: host, port: port, timeout: timeout, preferIPv6: preferIPv6, source: source, outcome: &outcome) else {
            return outcome
        }
        if tlsFromStart {
            if let failure = connection.startTLS(host: host, settings: settings) { return failed(failure) }
            outcome.tls = connection.handshake
        }

        var lines = LineBuffer()
        var chunk = [UInt8](repeating: 0, count: 4096)
        /// The next line, or nil at the end or the deadline.
        func nextLine() -> String? {
            while true {
                if let line = lines.next() { return line }
                guard lines.wantsMore else { return nil }
                switch connection.read(&chunk) {
                case .data(let count): lines.append(chunk[..<count])
                case .closed: lines.closed = true
                case .timedOut: return nil
                }
            }
        }
        for step in steps {
            var send = step.send
            if let pattern = step.expect {
                let regex: Regexp
                do throws(Regexp.SyntaxError) {
                    regex = try Regexp(pattern)
                } catch {
                    outcome.problem = "the expect pattern \(pattern) is not a regular expression: \(error)"
                    outcome.reason = "regex"
                    return outcome
                }
                var matched = false
                while let line = nextLine() {
                    if let match = regex.firstMatch(in: line) {
                        matched = true
                        if let text = send {
                            guard let expanded = expand(text, match: match, limit: maxSend) else {
                                outcome.problem = "the send after \(pattern), with what it captured, is over \(maxSend >> 10) KiB; at most that is sent"
                                outcome.reason = "send_too_large"
                                return outcome
                            }
                            send = expanded
                        }
                        break
                    }
                }
                guard matched else {
                    // Too long a line, or too much without one, is said as such: it is no
                    // timeout (it came at once) and no regex failure (nothing was matched against it).
                    if lines.lineTooLong {
                        outcome.problem = "the server sent a line over \(maxLine >> 10) KiB without a newline, waiting for \(pattern)"
                        outcome.reason = "line_too_long"
                        return outcome
                    }
                    if lines.readTooMuch {
                        outcome.problem = "the server sent over \(maxRead >> 20) MiB without a line matching \(pattern)"
                        outcome.reason = "answer_too_large"
                        return outcome
                    }
                    // As blackbox_exporter: a regex failure when the peer ended the conversation
                    // without the line; a read that timed out is a timeout, not a regex failure.
                    outcome.failedDueToRegex = lines.closed
                    outcome.problem =
                        lines.closed ? "the server closed the connection without a line matching \(pattern)" : "no line matched \(pattern) in time"
                    outcome.reason = lines.closed ? "regex" : "timeout"
                    return outcome
                }
            }
            if let send, let failure = connection.write(Array((send + "\n").utf8)) { return failed(failure) }
            if step.startTLS {
                // What the server sent before the handshake is not read over TLS (as blackbox
                // starts a new scanner on the TLS connection).
                lines = LineBuffer()
                if let failure = connection.startTLS(host: host, settings: settings) { return failed(failure) }
                outcome.tls = connection.handshake
            }
        }
        return outcome
    }

    /// `${1}`, `$1`, `${name}` in `template` replaced by what the match captured, as Go's
    /// `Regexp.Expand` does: an unknown or unmatched group is empty, `$$` is `$`, and a `$` that
    /// starts no well-formed reference (`${-1}`, `$*`) is kept as it is.
    /// With `limit`, nil as soon as the result would pass `limit` bytes (never built whole).
    package static func expand(_ template: String, match: Regexp.Match, limit: Int = .max) -> String? {
        var out = ""
        var rest = Substring(template)
        func group(_ name: Substring) -> String {
            let captured = groupNumber(name).map { match[$0] } ?? match[String(name)]
            return captured.map(String.init) ?? ""
        }
        while let dollar = rest.firstIndex(of: "$") {
            guard out.utf8.count <= limit else { return nil }
            out += rest[..<dollar]
            rest = rest[rest.index(after: dollar)...]
            if rest.first == "$" {
                out += "$"
                rest = rest.dropFirst()
                continue
            }
            let braced = rest.first == "{"
            let body = braced ? rest.dropFirst() : rest
            let name = body.prefix { $0.isLetter || $0.isNumber || $0 == "_" }
            let after = body.dropFirst(name.count)
            guard !name.isEmpty, !braced || after.first == "}" else {
                out += "$"
                continue
            }
            out += group(name)
            rest = braced ? after.dropFirst() : after
        }
        out += rest
        return out.utf8.count <= limit ? out : nil
    }

    /// A group's number as Go reads one in a template: ASCII digits, no leading zero, below
    /// 10^8; anything else is a name.
    static func groupNumber(_ name: Substring) -> Int? {
        guard name.utf8.allSatisfy({ (48...57).contains($0) }), name.utf8.count <= 8, name == "0" || name.first != "0" else { return nil }
        return Int(name)
    }
}

/// What a server has sent, cut into lines as they arrive: at `\n`, a `\r` before it dropped.
/// A line past `TCPExchange.maxLine` or a conversation past `TCPExchange.maxRead` ends the
/// reading; once the server has closed, what is left is the last line.
package struct LineBuffer: Sendable {
    private var buffer: [UInt8] = []
    private var readTotal = 0
    /// The server closed its side: nothing more will come.
    package var closed = false

    package init() {}

    /// Whether reading more could give another line.
    package var wantsMore: Bool { !closed && buffer.count <= TCPExchange.maxLine && readTotal <= TCPExchange.maxRead }
    /// Reading stopped at a line past `maxLine` (no newline in it).
    package var lineTooLong: Bool { buffer.count > TCPExchange.maxLine && !buffer.contains(0x0A) }
    /// Reading stopped past `maxRead`.
    package var readTooMuch: Bool { readTotal > TCPExchange.maxRead }

    package mutating func append(_ bytes: ArraySlice<UInt8>) {
        buffer += bytes
        readTotal += bytes.count
    }

    /// The next whole line; nil until one has arrived, or at the end.
    package mutating func next() -> String? {
        if let newline = buffer.firstIndex(of: 0x0A) {
            var line = buffer[..<newline]
            if line.last == 0x0D { line.removeLast() }
            defer { buffer.removeFirst(newline + 1) }
            return String(decoding: line, as: UTF8.self)
        }
        guard !wantsMore, !buffer.isEmpty, buffer.count <= TCPExchange.maxLine else { return nil }
        defer { buffer.removeAll() }
        return String(decoding: buffer, as: UTF8.self)
    }
}
