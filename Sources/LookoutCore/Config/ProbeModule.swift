import Foundation

/// A `/probe` module (blackbox_exporter style): what kind of probe, how long it may take, and
/// which targets it may be pointed at.
package struct ProbeModule: Sendable, Equatable {
    package var kind: SourceKind
    package var timeout: Duration
    /// Regular expressions; a target must match one as a whole (see `allows(_:)`).
    package var allow: [String]
    /// Follow redirects, checking every hop against `allow` (blackbox_exporter follows them too).
    package var followRedirects: Bool
    package var maxRedirects: Int
    /// The `Accept-Encoding` asked for (blackbox_exporter's `compression`); nil asks for none
    /// and counts the body as it arrives, as blackbox_exporter does without it.
    package var compression: String?

    package init(kind: SourceKind = .http, timeout: Duration = .seconds(5), allow: [String] = [], followRedirects: Bool = true, maxRedirects: Int = 10) {
        self.kind = kind
        self.timeout = timeout
        self.allow = allow
        self.followRedirects = followRedirects
        self.maxRedirects = maxRedirects
    }

    /// Whether some `allow` pattern matches the whole of `target`, anchored at both ends the way
    /// Prometheus anchors relabel regexes: `127\.0\.0\.1` alone allows nothing but that text, and
    /// `http://other.host/?127.0.0.1` does not slip through a pattern meant for one host.
    ///
    /// ```swift
    /// ProbeModule(allow: [#"http://127\.0\.0\.1:[0-9]+/.*"#]).allows("http://127.0.0.1:9480/ok")  // true
    /// ```
    package func allows(_ target: String) -> Bool {
        allow.contains { ProbeModule.matchesWhole($0, target) }
    }

    static func matchesWhole(_ pattern: String, _ text: String) -> Bool {
        guard let regex = try? NSRegularExpression(pattern: "\\A(?:\(pattern))\\z") else { return false }
        return regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
    }

    /// Whether `pattern` lets through URLs of hosts nobody named: it matches made-up targets on
    /// unrelated hosts. `check-config` warns about such a pattern.
    package static func allowsAnyHost(_ pattern: String) -> Bool {
        let strangers = ["http://lookout-unrelated-host.invalid/", "https://203.0.113.77:8443/anything?x=1"]
        return strangers.contains { matchesWhole(pattern, $0) }
    }
}
