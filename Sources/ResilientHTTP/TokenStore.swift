import Foundation

/// Holds one upstream's credentials and refreshes them at most once at a time: every call that
/// gets a 401 while a refresh is running waits for that refresh instead of starting its own.
actor TokenStore {
    private let method: AuthMethod
    private let transport: CurlTransport
    private let onRefresh: @Sendable (Bool) -> Void
    private var token: String?
    private var expiresAt: Date?
    private var refreshing: Task<Result<String, Failure>, Never>?

    init(method: AuthMethod, transport: CurlTransport, onRefresh: @escaping @Sendable (Bool) -> Void) {
        self.method = method
        self.transport = transport
        self.onRefresh = onRefresh
    }

    /// The token to send now, fetching one first if there is none or it has expired.
    func current() async -> Result<String, Failure> {
        if let token, expiresAt.map({ $0 > Date().addingTimeInterval(5) }) ?? true { return .success(token) }
        return await refresh(replacing: token)
    }

    /// A new token after `rejected` was refused. If another call already replaced it, that
    /// token is returned without asking again.
    func refresh(replacing rejected: String?) async -> Result<String, Failure> {
        if let token, token != rejected { return .success(token) }
        if let refreshing { return await refreshing.value }
        let task = Task { await fetchAndStore() }
        refreshing = task
        let result = await task.value
        refreshing = nil
        return result
    }

    private func fetchAndStore() async -> Result<String, Failure> {
        switch await fetch() {
        case .success(let (newToken, expiry)):
            token = newToken
            expiresAt = expiry
            onRefresh(true)
            return .success(newToken)
        case .failure(let failure):
            token = nil
            onRefresh(false)
            return .failure(failure)
        }
    }

    private func fetch() async -> Result<(String, Date?), Failure> {
        switch method {
        case .bearerTokenFile(let path):
            guard let data = FileManager.default.contents(atPath: path) else {
                return .failure(TokenStore.refreshFailed("cannot read the token file \(path)"))
            }
            let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            guard !text.isEmpty else { return .failure(TokenStore.refreshFailed("the token file \(path) is empty")) }
            return .success((text, nil))
        case .bearerToken(let token):
            return .success((token, nil))
        case .oauth2(let client):
            var form =
                "grant_type=client_credentials&client_id=\(TokenStore.formEncode(client.clientID))"
                + "&client_secret=\(TokenStore.formEncode(client.clientSecret))"
            if !client.scopes.isEmpty { form += "&scope=\(TokenStore.formEncode(client.scopes.joined(separator: " ")))" }
            for (name, value) in client.endpointParams.sorted(by: { $0.key < $1.key }) {
                form += "&\(TokenStore.formEncode(name))=\(TokenStore.formEncode(value))"
            }
            var request = TransferRequest(
                url: client.tokenURL, method: "POST",
                headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Accept", "application/json")],
                body: Array(form.utf8), timeout: .seconds(10), freshConnection: false, maxResponseBytes: 64 * 1024)
            client.connection.apply(to: &request)
            let result = await transport.perform(request)
            if let failure = FailureClassifier.classify(result) {
                let said = failure.serverMessage.map { ": \($0)" } ?? ""
                return .failure(TokenStore.refreshFailed("the token endpoint failed with \(failure.reason)\(said)", status: failure.httpStatus))
            }
            guard let object = try? JSONSerialization.jsonObject(with: Data(result.body)) as? [String: Any],
                let token = object["access_token"] as? String, !token.isEmpty
            else {
                return .failure(TokenStore.refreshFailed("the token endpoint's answer has no access_token"))
            }
            let lifetime = (object["expires_in"] as? NSNumber)?.doubleValue
            return .success((token, lifetime.map { Date().addingTimeInterval($0) }))
        }
    }

    static func refreshFailed(_ detail: String, status: Int? = nil) -> Failure {
        Failure(category: .authError, reason: "token_refresh_failed", httpStatus: status, detail: "the token refresh failed: \(detail)")
    }

    static func formEncode(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }
}
