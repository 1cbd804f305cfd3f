import MicroHTTPServer

/// RSS 2.0 and Atom documents with a fixed number of items, and a broken feed.
extension Simulator {
    static func rss(items: Int) -> HTTPResponse {
        let entries = (0..<max(0, items)).map { index in
            """
                <item>
                  <title>Item \(index + 1)</title>
                  <link>http://127.0.0.1/items/\(index + 1)</link>
                  <guid>sim-item-\(index + 1)</guid>
                  <pubDate>Mon, 02 Nov 2026 10:\(String(format2: index % 60)):00 GMT</pubDate>
                </item>
            """
        }.joined(separator: "\n")
        let body = """
            <?xml version="1.0" encoding="UTF-8"?>
            <rss version="2.0">
              <channel>
                <title>lookout-sim feed</title>
                <link>http://127.0.0.1/</link>
                <description>A deterministic feed with \(items) items</description>
            \(entries)
              </channel>
            </rss>
            """
        return HTTPResponse(headers: ["Content-Type": "application/rss+xml; charset=utf-8"], body: .bytes(Array(body.utf8)))
    }

    static func atom(items: Int) -> HTTPResponse {
        let entries = (0..<max(0, items)).map { index in
            """
              <entry>
                <title>Entry \(index + 1)</title>
                <id>urn:lookout-sim:entry:\(index + 1)</id>
                <updated>2026-11-02T10:\(String(format2: index % 60)):00Z</updated>
                <link href="http://127.0.0.1/entries/\(index + 1)"/>
              </entry>
            """
        }.joined(separator: "\n")
        let body = """
            <?xml version="1.0" encoding="UTF-8"?>
            <feed xmlns="http://www.w3.org/2005/Atom">
              <title>lookout-sim atom feed</title>
              <id>urn:lookout-sim:feed</id>
              <updated>2026-11-02T10:00:00Z</updated>
            \(entries)
            </feed>
            """
        return HTTPResponse(headers: ["Content-Type": "application/atom+xml; charset=utf-8"], body: .bytes(Array(body.utf8)))
    }

    static func malformedRSS() -> HTTPResponse {
        let body = """
            <?xml version="1.0" encoding="UTF-8"?>
            <rss version="2.0">
              <channel>
                <title>broken feed</title>
                <item><title>Unclosed item</title>
                <item><title>Another</title></item>
              </channel>
            """
        return HTTPResponse(headers: ["Content-Type": "application/rss+xml; charset=utf-8"], body: .bytes(Array(body.utf8)))
    }
}

extension String {
    /// Two digits, zero-padded.
    init(format2 value: Int) {
        self = value < 10 ? "0\(value)" : "\(value)"
    }
}
