import LookoutCore
import Testing

@Suite("FeedScanner")
struct FeedScannerTests {
    func scan(_ text: String) -> Result<FeedScanner.Shape, FeedScanner.Problem> {
        FeedScanner.scan(Array(text.utf8))
    }

    @Test func findsTheRootAndCountsItems() {
        let rss = """
            <?xml version="1.0"?>
            <!DOCTYPE rss [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;">]>
            <!-- <item> in a comment does not count -->
            <rss version="2.0" xmlns:content="x"><channel>
              <title a=">/<" b='"'>t &lol2;</title>
              <item><content:encoded><![CDATA[<item> in CDATA does not count]]></content:encoded></item>
              <item/>
            </channel></rss>
            """
        #expect(scan(rss) == .success(FeedScanner.Shape(root: "rss", items: 2)))
        #expect(scan(#"<a:feed xmlns:a="http://www.w3.org/2005/Atom"><a:entry/></a:feed>"#) == .success(FeedScanner.Shape(root: "feed", items: 1)))
    }

    @Test(arguments: [
        ("<rss><channel></rss>", 1, "</rss> closes <channel>"),
        ("<rss>\n<channel>\n<item>", 3, "the document ends inside <item>"),
        ("<rss></rss><rss></rss>", 1, "a second root element <rss>"),
        ("<rss></rss>trailing", 1, "text after the root element"),
        ("hello <rss/>", 1, "text before the root element"),
        ("<rss><!-- open", 1, "a comment is not closed"),
        ("<rss><![CDATA[ open", 1, "a CDATA section is not closed"),
        ("<rss><? open", 1, "a processing instruction is not closed"),
        ("<rss></item>", 1, "</item> closes <rss>"),
        ("</rss>", 1, "</rss> closes nothing"),
        ("< rss/>", 1, "\"<\" is not followed by a name"),
        ("", 1, "the document has no elements"),
        ("<rss a=\"unterminated>", 1, "the document ends inside <rss>"),
    ])
    func namesWhatIsWrongAndWhere(text: String, line: Int, message: String) {
        #expect(scan(text) == .failure(FeedScanner.Problem(line: line, message: message)))
    }
}
