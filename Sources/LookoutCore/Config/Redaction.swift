import Foundation

/// Keeps secrets out of what Lookout shows and stores: userinfo and secret-looking query values.
package enum Redaction {
    static let secretNames = ["token", "key", "secret", "password", "passwd", "auth", "signature", "sig", "credential", "session"]

    package static func url(_ text: String) -> String {
        guard var components = URLComponents(string: text) else { return text }
        if components.user != nil || components.password != nil {
            components.user = "REDACTED"
            components.password = nil
        }
        if let items = components.queryItems {
            components.queryItems = items.map { item in
                let name = item.name.lowercased()
                return secretNames.contains(where: { name.contains($0) }) ? URLQueryItem(name: item.name, value: "REDACTED") : item
            }
        }
        return components.string ?? text
    }
}
