import Foundation
import LookoutCore
import Testing

@Suite("JSON text")
struct JSONTextTests {
    @Test(arguments: [
        ("plain", #""plain""#),
        ("quote \" and back\\slash", #""quote \" and back\\slash""#),
        ("line\nbreak\r\ttab", #""line\nbreak\r\ttab""#),
        ("bell\u{07}", #""bell\u0007""#),
        ("ünïcode ✓", "\"ünïcode ✓\""),
        ("", #""""#),
    ])
    func escapesWhatJSONRequires(text: String, expected: String) throws {
        var writer = JSONWriter()
        writer.string(text)
        #expect(writer.text == expected)
        // And any JSON parser reads back the same string.
        let parsed = try JSONSerialization.jsonObject(with: Data("[\(writer.text)]".utf8), options: []) as? [String]
        #expect(parsed == [text])
    }

    @Test func writesNestedDocuments() {
        var writer = JSONWriter()
        writer.object { json in
            json.field("name") { $0.string("a\"b") }
            json.field("missing") { $0.string(nil) }
            json.field("rate") { $0.number(0.25) }
            json.field("count") { $0.int(3) }
            json.field("items") { json in
                json.array { json in
                    json.bool(true)
                    json.number(.nan)
                }
            }
        }
        #expect(writer.text == #"{"name":"a\"b","missing":null,"rate":0.25,"count":3,"items":[true,null]}"#)
    }
}
