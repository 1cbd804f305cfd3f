internal import CCurl
import Foundation

/// One email: a plain-text and an HTML part (multipart/alternative), to several recipients.
public struct MailMessage: Sendable, Equatable {
    public var from: String
    public var to: [String]
    public var subject: String
    public var text: String
    public var html: String
    /// The sending application, as `X-Mailer` (`Lookout/0.1.0`); nil sends none.
    public var mailer: String?

    /// Creates a message; `subject` loses any line break (it would start a header of its own).
    public init(from: String, to: [String], subject: String, text: String, html: String, mailer: String? = nil) {
        self.from = from
        self.to = to
        self.subject = subject.filter { $0 != "\r" && $0 != "\n" }
        self.text = text
        self.html = html
        self.mailer = mailer.map { $0.filter { $0 != "\r" && $0 != "\n" } }
    }

    /// The subject as a header value: ASCII as it is, anything else as an RFC 2047 encoded word.
    var encodedSubject: String {
        subject.utf8.allSatisfy({ $0 >= 32 && $0 < 127 }) ? subject : "=?UTF-8?B?" + Data(subject.utf8).base64EncodedString() + "?="
    }
}

/// How the SMTP server is reached.
public struct SMTPServer: Sendable, Equatable {
    /// `smtp://host:port` (STARTTLS when `startTLS`) or `smtps://host:port` (TLS from the start).
    public var url: String
    public var username: String?
    public var password: String?
    /// Require STARTTLS on `smtp://`: never send the message or the password in the clear.
    public var startTLS: Bool
    /// A CA bundle to trust instead of the system's (a private relay, tests).
    public var caFile: String?
    public var timeout: Duration

    /// Creates a server description; `startTLS` defaults to on.
    public init(url: String, username: String? = nil, password: String? = nil, startTLS: Bool = true, caFile: String? = nil, timeout: Duration = .seconds(30)) {
        self.url = url
        self.username = username
        self.password = password
        self.startTLS = startTLS
        self.caFile = caFile
        self.timeout = timeout
    }
}

/// Sends mail through libcurl's SMTP, one message per call, on a thread of its own (a blocking
/// `curl_easy_perform`; mail is rare and the HTTP transport's loop stays free).
public enum SMTPSender {
    /// What the server said.
    public struct Outcome: Sendable, Equatable {
        /// The last SMTP reply code (250 when the message was accepted); 0 when none came.
        public var replyCode: Int
        /// libcurl's error when sending failed; nil when the server took the message.
        public var error: String?
        public var ok: Bool { error == nil }
    }

    public static func send(_ message: MailMessage, via server: SMTPServer) async -> Outcome {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(returning: perform(message, server))
            }
        }
    }

    static func perform(_ message: MailMessage, _ server: SMTPServer) -> Outcome {
        CurlGlobal.ensureInitialized()
        guard let handle = curl_easy_init() else { return Outcome(replyCode: 0, error: "cannot create a libcurl handle") }
        defer { curl_easy_cleanup(handle) }
        let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        defer { errorBuffer.deallocate() }
        lookout_curl_setopt_string(handle, CURLOPT_URL, server.url)
        lookout_curl_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
        lookout_curl_setopt_ptr(handle, CURLOPT_ERRORBUFFER, errorBuffer)
        lookout_curl_setopt_long(handle, CURLOPT_TIMEOUT_MS, Int(server.timeout.totalMilliseconds))
        lookout_curl_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "smtp,smtps")
        if server.startTLS { lookout_curl_setopt_long(handle, CURLOPT_USE_SSL, Int(CURLUSESSL_ALL.rawValue)) }
        if let username = server.username { lookout_curl_setopt_string(handle, CURLOPT_USERNAME, username) }
        if let password = server.password { lookout_curl_setopt_string(handle, CURLOPT_PASSWORD, password) }
        if let caFile = server.caFile { lookout_curl_setopt_string(handle, CURLOPT_CAINFO, caFile) }
        lookout_curl_setopt_string(handle, CURLOPT_MAIL_FROM, "<\(message.from)>")
        var recipients: UnsafeMutablePointer<curl_slist>?
        for address in message.to { recipients = curl_slist_append(recipients, "<\(address)>") }
        defer { curl_slist_free_all(recipients) }
        lookout_curl_setopt_slist(handle, CURLOPT_MAIL_RCPT, recipients)

        var headers: UnsafeMutablePointer<curl_slist>?
        let date = SMTPSender.dateHeader()
        for header in [
            "Date: \(date)", "From: <\(message.from)>", "To: " + message.to.map { "<\($0)>" }.joined(separator: ", "),
            "Subject: \(message.encodedSubject)", "Message-ID: <\(UUID().uuidString)@lookout>",
        ] + (message.mailer.map { ["X-Mailer: \($0)"] } ?? []) {
            headers = curl_slist_append(headers, header)
        }
        defer { curl_slist_free_all(headers) }
        lookout_curl_setopt_slist(handle, CURLOPT_HTTPHEADER, headers)

        // multipart/alternative: the plain text first, the HTML (preferred where it can show) last.
        let mime = curl_mime_init(handle)
        defer { curl_mime_free(mime) }
        let alternative = curl_mime_init(handle)
        for (body, type) in [(message.text, "text/plain; charset=utf-8"), (message.html, "text/html; charset=utf-8")] {
            let part = curl_mime_addpart(alternative)
            curl_mime_data(part, body, body.utf8.count)
            curl_mime_type(part, type)
            curl_mime_encoder(part, "quoted-printable")
        }
        let wrapper = curl_mime_addpart(mime)
        curl_mime_subparts(wrapper, alternative)
        curl_mime_type(wrapper, "multipart/alternative")
        lookout_curl_setopt_ptr(handle, CURLOPT_MIMEPOST, UnsafeRawPointer(mime))

        let code = curl_easy_perform(handle)
        var reply = 0
        lookout_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &reply)
        guard code == CURLE_OK else {
            let detail = String(cString: errorBuffer)
            let text = detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail
            return Outcome(replyCode: reply, error: PrintableText.escape(text))
        }
        return Outcome(replyCode: reply, error: nil)
    }
}

extension SMTPSender {
    /// `Mon, 23 Nov 2026 19:10:14 +0000`, the Date header's format (strftime in the C locale:
    /// Foundation's formatters leak on Linux).
    static func dateHeader(_ seconds: time_t = time(nil)) -> String {
        var now = seconds
        var parts = tm()
        gmtime_r(&now, &parts)
        var buffer = [CChar](repeating: 0, count: 64)
        let count = strftime(&buffer, buffer.count, "%a, %d %b %Y %H:%M:%S +0000", &parts)
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
