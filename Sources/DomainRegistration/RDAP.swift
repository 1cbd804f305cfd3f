import Foundation

/// What Lookout reads of RDAP (RFC 9083, RFC 9224): which server answers for a top-level domain
/// (IANA's bootstrap file), and when a domain's registration expires (its `expiration` event).
/// Parsing only, over bytes already fetched and bounded in size; knows nothing of Lookout.
///
/// ```swift
/// let servers = try RDAP.Bootstrap(json: bootstrapBytes).servers(forTLD: "com")
/// let expires = try RDAP.expiration(json: answerBytes)           // 2027-01-03 04:05:06 UTC
/// ```
public enum RDAP {
    /// Why an answer could not be read.
    public struct ReadError: Error, Sendable, Equatable, CustomStringConvertible {
        public let description: String

        public init(description: String) {
            self.description = description
        }
    }

    /// IANA's `dns.json`: `services` is a list of `[[TLD, …], [URL, …]]`.
    public struct Bootstrap: Sendable, Equatable {
        /// The RDAP base URLs of each top-level domain, https first.
        public let servers: [String: [String]]

        public init(json bytes: [UInt8]) throws(ReadError) {
            guard let document = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
                let services = document["services"] as? [Any]
            else { throw ReadError(description: "the bootstrap file is not RDAP's (no services list)") }
            var servers: [String: [String]] = [:]
            for service in services.prefix(10_000) {
                guard let pair = service as? [Any], pair.count == 2, let tlds = pair[0] as? [String], let urls = pair[1] as? [String] else { continue }
                let usable = urls.filter { $0.hasPrefix("https://") || $0.hasPrefix("http://") }.sorted {
                    $0.hasPrefix("https://") && !$1.hasPrefix("https://")
                }
                guard !usable.isEmpty else { continue }
                for tld in tlds.prefix(10_000) { servers[tld.lowercased()] = usable }
            }
            guard !servers.isEmpty else { throw ReadError(description: "the bootstrap file lists no server") }
            self.servers = servers
        }

        public func servers(forTLD tld: String) -> [String] {
            servers[tld.lowercased()] ?? []
        }
    }

    /// The URL of `domain`'s record on the server at `base` (`…/domain/acme.com`).
    public static func domainURL(base: String, domain: String) -> String {
        (base.hasSuffix("/") ? base : base + "/") + "domain/" + domain
    }

    /// The earliest and latest expiration a registry may honestly state: before 1985 there was no
    /// registration, and none runs past a century from now.
    static func believable(_ date: Date, now: Date) -> Bool {
        date.timeIntervalSince1970 >= 473_385_600 && date.timeIntervalSince(now) <= 100 * 365 * 86_400
    }

    /// When the registration in an RDAP domain answer expires: its `expiration` event's date.
    /// Throws when the answer is not RDAP's, names no expiration, or a date nobody could mean.
    public static func expiration(json bytes: [UInt8], now: Date = Date()) throws(ReadError) -> Date {
        guard let document = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] else {
            throw ReadError(description: "the answer is not an RDAP document (not a JSON object)")
        }
        if let code = document["errorCode"] as? Int {
            throw ReadError(description: "the registry answered error \(code)" + ((document["title"] as? String).map { ": \($0)" } ?? ""))
        }
        guard let events = document["events"] as? [Any] else { throw ReadError(description: "the answer has no events") }
        let formatter = ISO8601DateFormatter()
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        for case let event as [String: Any] in events.prefix(1000) where (event["eventAction"] as? String)?.lowercased() == "expiration" {
            guard let text = event["eventDate"] as? String, let date = formatter.date(from: text) ?? fractional.date(from: text) else {
                throw ReadError(description: "the expiration event's date is not a date")
            }
            guard believable(date, now: now) else { throw ReadError(description: "the expiration date \(text) is not believable") }
            return date
        }
        throw ReadError(description: "the answer names no expiration")
    }
}
