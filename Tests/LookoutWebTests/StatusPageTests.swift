import MicroHTTPServer
import Testing

@testable import LookoutWeb

@Suite("Status page pieces")
struct StatusPagePieceTests {
    @Test func sparklineDrawsMinutesWithGapsWhereNothingWasProbed() {
        let svg = StatusPage.sparkline([nil, nil, 0, 0.5, nil, nil, 1])
        // Drawn from the first probed minute: 5 points over 120 px, 30 px apart; y runs from 23
        // (0 %) to 1 (100 %).
        #expect(svg.contains(#"<path d="M0.0 23.0 L30.0 12.0 M120.0 1.0 "/>"#))
        #expect(svg.contains("over the last 5 minutes, at most 100%"))
        // One minute of data is a level line across the whole width, not a dot.
        #expect(StatusPage.sparkline([nil, nil, 1]).contains(#"<path d="M0.0 1.0 L120.0 1.0 "/>"#))
        #expect(StatusPage.sparkline([nil, nil]).contains(#"<path d=""/>"#))
        // A rate that is not a ratio is drawn at the edge and named within range, not trapped on.
        #expect(StatusPage.sparkline([.nan, 0.5]).contains("at most 50%"))
        #expect(StatusPage.sparkline([0.5, .nan]).contains(#"at most 50%"><path d="M0.0 12.0 L120.0 23.0 "/>"#))
        #expect(StatusPage.sparkline([.infinity]).contains(#"at most 1000000000000000%"><path d="M0.0 1.0 L120.0 1.0 "/>"#))
    }

    @Test func writesFixedDecimalsWithoutFoundation() {
        #expect(StatusPage.fixed(12.345, 1) == "12.3")
        #expect(StatusPage.fixed(0.05, 2) == "0.05")
        #expect(StatusPage.fixed(-1.5, 0) == "-2")
        #expect(StatusPage.fixed(.nan, 1) == "–")
        #expect(StatusPage.fixed(3.007, 2) == "3.01")
        #expect(StatusPage.fixed(-0.001, 2) == "0.00")
        #expect(StatusPage.fixed(12, 3) == "12.000")
        #expect(StatusPage.fixed(-.infinity, 1) == "–")
        // Magnitudes no chart has are held, not trapped on.
        #expect(StatusPage.fixed(1e300, 2) == "90000000000000000.00")
        #expect(StatusPage.fixed(0.5, -3) == "1")
        var bytes: [UInt8] = []
        StatusPage.appendTenths(7.25, to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == "7.3")
        for (value, text) in [(Double.nan, "0.0"), (-4, "0.0"), (.infinity, "900000000000000000.0"), (0, "0.0"), (1234.56, "1234.6")] {
            bytes.removeAll()
            StatusPage.appendTenths(value, to: &bytes)
            #expect(String(decoding: bytes, as: UTF8.self) == text, "\(value)")
        }
        for value: UInt64 in [0, 9, 10, 99, 100, 12_345, 9_999_999_999_999_999_999, 10_000_000_000_000_000_000, .max] {
            bytes.removeAll()
            StatusPage.appendInteger(value, to: &bytes)
            #expect(String(decoding: bytes, as: UTF8.self) == String(value))
        }
        #expect(StatusPage.percent(-1) == "0.0%" && StatusPage.percent(0.9995) == "99.95%")
    }

    @Test func escapesMarkupByteWise() {
        #expect(HTML.escape(#"<a href="x">'&'</a> ü"#) == "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt; ü")
        #expect(HTML.escape("plain ✓") == "plain ✓")
    }
}

@Suite("Exposition buffers")
struct ExpositionBufferTests {
    @Test func aSentScrapesBufferIsReusedByTheNext() {
        let capacity = 16 << 20  // only buffers this large are kept, so other tests never take it
        let first = ExpositionWriter()
        first.reserve(capacity)
        first.sample("m", value: 1)
        var body: OwnedBytes? = first.take()
        let address = body?.pointer
        #expect(body?.array == Array("m 1\n".utf8))
        body = nil  // the server is done with it

        let second = ExpositionWriter()
        second.reserve(capacity)
        second.sample("m", value: 2)
        let again = second.take()
        #expect(again.pointer == address)
        #expect(again.array == Array("m 2\n".utf8))
    }
}
