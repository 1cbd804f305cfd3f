import Foundation
import MicroHTTPServer

/// RDAP for domain_expiry's tests: `/rdap/dns.json` is a bootstrap file naming this simulator for
/// `.test`, and `/rdap/domain/NAME` answers by the name: `dN.test` expires in N days,
/// `garbage.test` is no JSON, `liar.test` expires in the year 3000, `deep.test` nests 100,000
/// arrays, `down.test` answers 503, anything else 404.
extension Simulator {
    func rdapBootstrap(_ request: HTTPRequest) async -> HTTPResponse {
        let host = request.headers["Host"] ?? "127.0.0.1"
        return .json(#"{"version": "1.0", "services": [[["test"], ["http://\#(host)/rdap/"]]]}"#)
    }

    func rdapDomain(_ request: HTTPRequest) async -> HTTPResponse {
        let name = (request.pathParameters["name"] ?? "").lowercased()
        func answer(expiring date: Date) -> HTTPResponse {
            let text = ISO8601DateFormatter().string(from: date)
            var response = HTTPResponse.json(
                #"{"objectClassName": "domain", "ldhName": "\#(name)", "events": [{"eventAction": "registration", "eventDate": "2001-02-03T04:05:06Z"}, {"eventAction": "expiration", "eventDate": "\#(text)"}]}"#
            )
            response.headers.set("Content-Type", "application/rdap+json")
            return response
        }
        switch name {
        case "garbage.test": return .text("<html>not RDAP</html>")
        case "liar.test": return answer(expiring: Date(timeIntervalSince1970: 32_503_680_000))
        case "deep.test": return .json(String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000))
        case "down.test": return .json(#"{"errorCode": 503, "title": "maintenance"}"#, status: 503)
        default:
            guard name.hasPrefix("d"), name.hasSuffix(".test"), let days = Int(name.dropFirst().dropLast(".test".count)), days < 100_000 else {
                return .json(#"{"errorCode": 404, "title": "not found"}"#, status: 404)
            }
            return answer(expiring: Date().addingTimeInterval(Double(days) * 86_400))
        }
    }
}
