import Foundation
import ResilientHTTP
#if canImport(FoundationXML)
import FoundationXML
#endif

/// What a source's kind requires of a response its status accepted.
public enum ResponseCheck {
    public static func validator(for kind: SourceKind) -> (@Sendable (TransferResult) -> Failure?)? {
        switch kind {
        case .http, .download: return nil
        case .json: return { json($0.body) }
        case .rss: return { feed($0.body) }
        }
    }

    /// The body must be a JSON document.
    public static func json(_ body: [UInt8]) -> Failure? {
        do {
            _ = try JSONSerialization.jsonObject(with: Data(body), options: [.fragmentsAllowed])
            return nil
        } catch {
            return Failure(category: .invalidResponse, reason: "json_invalid", detail: "the body is not valid JSON (\(body.count) bytes)")
        }
    }

    /// The body must be well-formed XML whose root is an RSS or Atom feed.
    public static func feed(_ body: [UInt8]) -> Failure? {
        let parser = XMLParser(data: Data(body))
        let shape = FeedShape()
        parser.delegate = shape
        // FoundationXML on Linux recovers from some errors, so nesting is checked here too.
        guard parser.parse(), shape.problem == nil, shape.open.isEmpty else {
            let code = (parser.parserError as NSError?)?.code
            let detail = shape.problem ?? (code == 5 ? "the document ends inside an element" : code.map { "XML error \($0)" } ?? "unclosed elements")
            return Failure(
                category: .invalidResponse, reason: "xml_invalid",
                detail: "the feed is not well-formed XML (line \(parser.lineNumber): \(detail))")
        }
        guard let root = shape.root, ["rss", "feed", "rdf:RDF", "RDF"].contains(root) else {
            return Failure(category: .invalidResponse, reason: "xml_invalid", detail: "the document is XML but not an RSS or Atom feed")
        }
        return nil
    }

    private final class FeedShape: NSObject, XMLParserDelegate {
        var root: String?
        var open: [String] = []
        var problem: String?

        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
            if root == nil { root = name }
            open.append(name)
        }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            guard open.last == name else {
                if problem == nil { problem = "</\(name)> closes <\(open.last ?? "nothing")>" }
                return
            }
            open.removeLast()
        }
    }
}
