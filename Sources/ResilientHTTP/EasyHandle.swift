internal import CCurl
internal import CLibCrypto
import Foundation
import Synchronization

/// Owns one libcurl easy handle and the buffers of its transfer. Configured by the submitting
/// task, then driven only by the multi loop's thread until `finish` hands the result back.
final class EasyHandle: @unchecked Sendable {
    // After submit, every field but `cancelRequested` is touched only by the loop thread.
    let handle: UnsafeMutableRawPointer
    private let request: TransferRequest
    private let userAgent: String?
    private let pool: HandlePool?
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private var connectTo: UnsafeMutablePointer<curl_slist>?
    private var proxyHeaderList: UnsafeMutablePointer<curl_slist>?
    private let errorBuffer: UnsafeMutablePointer<CChar>
    private var body: [UInt8] = []
    private var headers: [(name: String, value: String)] = []
    private var exceededSizeLimit = false
    private var sinkDecided = false
    private var sinkActive = false
    private var bodyBytes = 0
    private var tlsVersion: String?
    /// Read from the answering connection (see `received(headerLine:)`).
    private var liveExpiry: Int64?
    private var peerCertificate: PeerCertificate?
    private var continuation: CheckedContinuation<TransferResult, Never>?
    let cancelRequested = Atomic<Bool>(false)

    /// - Parameter connectTo: a `CURLOPT_CONNECT_TO` entry (`LocalhostResolution`).
    init?(_ request: TransferRequest, userAgent: String? = nil, pool: HandlePool? = nil, connectTo: String? = nil) {
        CurlGlobal.ensureInitialized()
        guard let pooled = pool?.take() ?? PooledCurl() else { return nil }
        self.handle = pooled.handle
        self.errorBuffer = pooled.errorBuffer
        self.request = request
        self.userAgent = userAgent
        self.pool = pool
        errorBuffer.update(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        configure()
        // A server name for TLS set its own (`configureTLSAndProxy`); the localhost address adds to it.
        if let connectTo {
            self.connectTo = curl_slist_append(self.connectTo, connectTo)
            lookout_curl_setopt_slist(handle, CURLOPT_CONNECT_TO, self.connectTo)
        }
    }

    deinit {
        curl_slist_free_all(headerList)
        curl_slist_free_all(connectTo)
        curl_slist_free_all(proxyHeaderList)
        let pooled = PooledCurl(handle: handle, errorBuffer: errorBuffer)
        if let pool { pool.give(pooled) } else { pooled.destroy() }
    }

    func attach(_ continuation: CheckedContinuation<TransferResult, Never>) {
        self.continuation = continuation
    }

    private func configure() {
        let this = Unmanaged.passUnretained(self).toOpaque()
        lookout_curl_setopt_string(handle, CURLOPT_URL, request.url)
        lookout_curl_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
        lookout_curl_setopt_ptr(handle, CURLOPT_ERRORBUFFER, errorBuffer)
        if let userAgent { lookout_curl_setopt_string(handle, CURLOPT_USERAGENT, userAgent) }
        if let encoding = request.acceptEncoding { lookout_curl_setopt_string(handle, CURLOPT_ACCEPT_ENCODING, encoding) }
        lookout_curl_setopt_long(handle, CURLOPT_TIMEOUT_MS, Int(request.timeout.totalMilliseconds))
        if let connect = request.connectTimeout {
            lookout_curl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, Int(connect.totalMilliseconds))
        }
        lookout_curl_setopt_long(handle, CURLOPT_FOLLOWLOCATION, request.followRedirects ? 1 : 0)
        lookout_curl_setopt_long(handle, CURLOPT_MAXREDIRS, request.maxRedirects)
        // A handle may have served another transfer: never resume that one's TLS session, so
        // every probe's handshake is a full one, as on a new handle.
        lookout_curl_setopt_long(handle, CURLOPT_SSL_SESSIONID_CACHE, 0)
        lookout_curl_setopt_long(handle, CURLOPT_FRESH_CONNECT, request.freshConnection ? 1 : 0)
        lookout_curl_setopt_long(handle, CURLOPT_FORBID_REUSE, request.freshConnection ? 1 : 0)
        lookout_curl_setopt_long(handle, CURLOPT_CONNECT_ONLY, request.connectOnly ? 1 : 0)
        if request.requiresHTTP2 {
            let secure = request.url.lowercased().hasPrefix("https://")
            let version = secure ? CURL_HTTP_VERSION_2TLS : CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE
            lookout_curl_setopt_long(handle, CURLOPT_HTTP_VERSION, version)
        } else if request.forbidsHTTP2 {
            lookout_curl_setopt_long(handle, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1)
        }
        if request.connectOnly && request.startTLS {
            // The mail protocols' connect phase: greeting, EHLO/CAPABILITY, STARTTLS, handshake.
            lookout_curl_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "smtp,imap,pop3")
            lookout_curl_setopt_long(handle, CURLOPT_USE_SSL, Int(CURLUSESSL_ALL.rawValue))
        } else {
            lookout_curl_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "http,https")
        }
        lookout_curl_setopt_string(handle, CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
        // A connect-only transfer has no response to read the live connection at: its
        // certificates come from libcurl's (costly) CERTINFO. Others read them from the SSL*.
        if request.connectOnly, request.startTLS || ASCII.hasPrefixIgnoringCase(request.url, "https://") {
            lookout_curl_setopt_long(handle, CURLOPT_CERTINFO, 1)
        }
        lookout_curl_setopt_long(handle, CURLOPT_SSL_VERIFYPEER, request.skipsCertificateVerification ? 0 : 1)
        lookout_curl_setopt_long(handle, CURLOPT_SSL_VERIFYHOST, request.skipsCertificateVerification ? 0 : 2)
        if let caFile = request.caFile {
            lookout_curl_setopt_string(handle, CURLOPT_CAINFO, caFile)
        }
        // Debian's libcurl has a CA directory besides its bundle (the same certificates), and
        // libcurl keeps its parsed CA store between connections only when there is no directory:
        // with one, every TLS connection parsed the whole bundle again, about 29 ms of CPU for
        // the 139 certificates of Debian's bundle against 0.9 ms for the rest of the handshake. The store is
        // kept 5 minutes, so a CA file changed in place is read again soon.
        lookout_curl_setopt_string(handle, CURLOPT_CAPATH, nil)
        lookout_curl_setopt_long(handle, CURLOPT_CA_CACHE_TIMEOUT, 300)
        configureTLSAndProxy()
        if request.method == "HEAD" {
            lookout_curl_setopt_long(handle, CURLOPT_NOBODY, 1)
        } else if request.method != "GET" {
            lookout_curl_setopt_string(handle, CURLOPT_CUSTOMREQUEST, request.method)
        }
        if let body = request.body {
            lookout_curl_setopt_long(handle, CURLOPT_POSTFIELDSIZE, body.count)
            body.withUnsafeBytes { raw in
                _ = lookout_curl_setopt_ptr(handle, CURLOPT_COPYPOSTFIELDS, raw.baseAddress ?? UnsafeRawPointer(errorBuffer))
            }
        }
        for (name, value) in request.headers {
            // "Name:" with nothing after it is libcurl's way to leave out a field it would send.
            headerList = curl_slist_append(headerList, value.isEmpty ? "\(name):" : "\(name): \(value)")
        }
        // A connection used once says so (RFC 9112 section 9.6), as blackbox_exporter's probes do,
        // so both send the same exchange; the server closes first and keeps the TIME_WAIT state.
        // libcurl leaves the header out of HTTP/2 requests, where it is forbidden.
        if request.freshConnection && !request.hasHeader("connection") {
            headerList = curl_slist_append(headerList, "Connection: close")
        }
        if request.body != nil && !request.hasHeader("expect") {
            headerList = curl_slist_append(headerList, "Expect:")
        }
        if let headerList { lookout_curl_setopt_slist(handle, CURLOPT_HTTPHEADER, headerList) }

        lookout_curl_setopt_ptr(handle, CURLOPT_WRITEDATA, this)
        lookout_curl_setopt_write_function(handle, CURLOPT_WRITEFUNCTION) { data, size, count, owner in
            let easy = Unmanaged<EasyHandle>.fromOpaque(owner!).takeUnretainedValue()
            return easy.received(body: data!, count: size * count)
        }
        lookout_curl_setopt_ptr(handle, CURLOPT_HEADERDATA, this)
        lookout_curl_setopt_write_function(handle, CURLOPT_HEADERFUNCTION) { data, size, count, owner in
            let easy = Unmanaged<EasyHandle>.fromOpaque(owner!).takeUnretainedValue()
            return easy.received(headerLine: data!, count: size * count)
        }
    }

    /// TLS versions, a client certificate, another name for SNI, a proxy: what a blackbox
    /// module's `tls_config` and `proxy_url` ask for.
    private func configureTLSAndProxy() {
        if request.tlsMinimumMinor != nil || request.tlsMaximumMinor != nil {
            // libcurl numbers TLS 1.0 to 1.3 as 4 to 7; the maximum goes in the upper 16 bits.
            let minimum = request.tlsMinimumMinor.map { 4 + min(max($0, 0), 3) } ?? Int(CURL_SSLVERSION_TLSv1)
            let maximum = request.tlsMaximumMinor.map { (4 + min(max($0, 0), 3)) << 16 } ?? 0
            lookout_curl_setopt_long(handle, CURLOPT_SSLVERSION, minimum | maximum)
        }
        if let local = request.localAddress { lookout_curl_setopt_string(handle, CURLOPT_INTERFACE, "host!" + local) }
        if let version = request.onlyIPVersion {
            lookout_curl_setopt_long(handle, CURLOPT_IPRESOLVE, version == 6 ? Int(CURL_IPRESOLVE_V6) : Int(CURL_IPRESOLVE_V4))
        }
        if let (certificate, key) = request.clientCertificate {
            lookout_curl_setopt_string(handle, CURLOPT_SSLCERT, certificate)
            lookout_curl_setopt_string(handle, CURLOPT_SSLKEY, key)
        }
        if let name = request.tlsServerName, ASCII.hasPrefixIgnoringCase(request.url, "https://"),
            var parts = URLParts(request.url), let host = parts.host, host != name
        {
            // libcurl sends SNI and verifies for the URL's host: name the server in the URL and
            // connect to the real host, which `Host` still names.
            let port = parts.port ?? 443
            parts.host = name
            lookout_curl_setopt_string(handle, CURLOPT_URL, parts.text)
            connectTo = curl_slist_append(nil, "\(name):\(port):\(host):\(port)")
            lookout_curl_setopt_slist(handle, CURLOPT_CONNECT_TO, connectTo)
            if !request.hasHeader("host") {
                headerList = curl_slist_append(headerList, "Host: \(parts.port.map { "\(host):\($0)" } ?? host)")
            }
        }
        if let proxy = request.proxy {
            lookout_curl_setopt_string(handle, CURLOPT_PROXY, proxy)
            if let noProxy = request.noProxy { lookout_curl_setopt_string(handle, CURLOPT_NOPROXY, noProxy) }
            for (name, value) in request.proxyHeaders { proxyHeaderList = curl_slist_append(proxyHeaderList, "\(name): \(value)") }
            if let proxyHeaderList {
                lookout_curl_setopt_long(handle, CURLOPT_HEADEROPT, Int(CURLHEADER_SEPARATE))
                lookout_curl_setopt_slist(handle, CURLOPT_PROXYHEADER, proxyHeaderList)
            }
        }
    }

    private func received(body data: UnsafeMutablePointer<CChar>, count: Int) -> Int {
        if !sinkDecided {
            sinkDecided = true
            var status = 0
            lookout_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
            if let sink = request.bodySink, status == 200 || status == 206 {
                sinkActive = sink.begin(status: status, headers: headers)
            }
        }
        bodyBytes += count
        if !request.keepsBody {
            // Counted, not kept: the limit, when there is one, is on what arrived.
            guard let limit = request.maxResponseBytes, bodyBytes > limit else { return count }
            exceededSizeLimit = true
            return 0
        }
        if sinkActive, let sink = request.bodySink {
            guard sink.write(UnsafeRawBufferPointer(start: data, count: count)) else {
                exceededSizeLimit = true
                return 0
            }
            return count
        }
        if let limit = request.maxResponseBytes, body.count + count > limit {
            exceededSizeLimit = true
            return 0  // makes libcurl abort with CURLE_WRITE_ERROR
        }
        data.withMemoryRebound(to: UInt8.self, capacity: count) {
            body.append(contentsOf: UnsafeBufferPointer(start: $0, count: count))
        }
        return count
    }

    private func received(headerLine data: UnsafeMutablePointer<CChar>, count: Int) -> Int {
        let line = UnsafeRawBufferPointer(start: data, count: count)
        if count >= 5, line[0] == UInt8(ascii: "H"), line[1] == UInt8(ascii: "T"), line[2] == UInt8(ascii: "T"),
            line[3] == UInt8(ascii: "P"), line[4] == UInt8(ascii: "/")
        {
            headers.removeAll(keepingCapacity: true)  // a new response: after a redirect or a 100 Continue
            sinkDecided = false
            // The connection is open now (libcurl hands out its SSL* only while it is): the
            // answering connection's certificates, and for blackbox's series its protocol.
            if let ssl = lookout_curl_openssl_ptr(handle) {
                let expiry = lookout_ssl_earliest_expiry(ssl)
                liveExpiry = expiry >= 0 ? expiry : nil
                if request.describesTLS {
                    if tlsVersion == nil, let version = lookout_ssl_version(ssl) { tlsVersion = String(cString: version) }
                    peerCertificate = PeerCertificate(ssl: ssl)
                }
            }
        } else if let colon = line.firstIndex(of: UInt8(ascii: ":")) {
            let name = EasyHandle.trimmed(line, 0, colon)
            let value = EasyHandle.trimmed(line, colon + 1, count)
            headers.append((String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self)))
        }
        return count
    }

    /// Bytes [start, end) without surrounding spaces, tabs, CR and LF.
    private static func trimmed(_ bytes: UnsafeRawBufferPointer, _ start: Int, _ end: Int) -> UnsafeRawBufferPointer.SubSequence {
        func blank(_ byte: UInt8) -> Bool { byte == 32 || byte == 9 || byte == 13 || byte == 10 }
        var lower = start
        var upper = end
        while lower < upper, blank(bytes[lower]) { lower += 1 }
        while upper > lower, blank(bytes[upper - 1]) { upper -= 1 }
        return bytes[lower..<upper]
    }

    /// Collects libcurl's figures and resumes the waiting task (loop thread).
    func finish(code: CURLcode, cancelled: Bool = false) {
        var status = 0
        lookout_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        var redirects = 0
        lookout_curl_getinfo_long(handle, CURLINFO_REDIRECT_COUNT, &redirects)
        var version = 0
        var osErrno = 0
        lookout_curl_getinfo_long(handle, CURLINFO_OS_ERRNO, &osErrno)
        lookout_curl_getinfo_long(handle, CURLINFO_HTTP_VERSION, &version)
        func seconds(_ info: CURLINFO) -> Double {
            var micros: curl_off_t = 0
            lookout_curl_getinfo_int64(handle, info, &micros)
            return Double(micros) / 1_000_000
        }
        let nameLookup = seconds(CURLINFO_NAMELOOKUP_TIME_T)
        let connect = seconds(CURLINFO_CONNECT_TIME_T)
        let appConnect = seconds(CURLINFO_APPCONNECT_TIME_T)
        let preTransfer = seconds(CURLINFO_PRETRANSFER_TIME_T)
        let startTransfer = seconds(CURLINFO_STARTTRANSFER_TIME_T)
        let total = seconds(CURLINFO_TOTAL_TIME_T)
        let phases = PhaseTimings(
            dns: nameLookup,
            connect: max(0, connect - nameLookup),
            tls: appConnect > 0 ? max(0, appConnect - connect) : 0,
            ttfb: startTransfer > 0 ? max(0, startTransfer - preTransfer) : 0,
            transfer: startTransfer > 0 ? max(0, total - startTransfer) : 0)
        let expiry = liveExpiry ?? (request.connectOnly ? lookout_curl_earliest_cert_expiry(handle) : -1)
        var ipPointer: UnsafeMutablePointer<CChar>?
        lookout_curl_getinfo_string(handle, CURLINFO_PRIMARY_IP, &ipPointer)
        let ip = ipPointer.map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }
        var length: curl_off_t = -1
        lookout_curl_getinfo_int64(handle, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length)
        let message = code == CURLE_OK ? "" : (errorBuffer.pointee == 0 ? String(cString: curl_easy_strerror(code)) : String(cString: errorBuffer))
        let result = TransferResult(
            curlCode: Int32(code.rawValue), curlMessage: message,
            httpStatus: status > 0 ? status : nil, headers: headers, body: body, phases: phases,
            totalSeconds: total, redirects: redirects, httpVersion: EasyHandle.versionText(version),
            bodyBytes: bodyBytes, exceededSizeLimit: exceededSizeLimit, cancelled: cancelled,
            osErrno: Int32(osErrno), certificateExpiry: expiry >= 0 ? Date(timeIntervalSince1970: Double(expiry)) : nil)
        var redirectPointer: UnsafeMutablePointer<CChar>?
        lookout_curl_getinfo_string(handle, CURLINFO_REDIRECT_URL, &redirectPointer)
        var finished = result
        finished.redirectURL = redirectPointer.map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }
        finished.primaryIP = ip
        finished.contentLength = Int64(length)
        finished.connectOnly = request.connectOnly
        if request.describesTLS {
            finished.tlsVersion = tlsVersion
            finished.peerCertificate = peerCertificate
        }
        let waiting = continuation
        continuation = nil
        waiting?.resume(returning: finished)
    }

    private static func versionText(_ value: Int) -> String? {
        switch value {
        case Int(CURL_HTTP_VERSION_1_0): return "1.0"
        case Int(CURL_HTTP_VERSION_1_1): return "1.1"
        case Int(CURL_HTTP_VERSION_2_0): return "2"
        case Int(CURL_HTTP_VERSION_3): return "3"
        default: return nil
        }
    }
}

/// A libcurl easy handle and its error buffer, kept between transfers.
struct PooledCurl: @unchecked Sendable {
    let handle: UnsafeMutableRawPointer
    let errorBuffer: UnsafeMutablePointer<CChar>

    init(handle: UnsafeMutableRawPointer, errorBuffer: UnsafeMutablePointer<CChar>) {
        self.handle = handle
        self.errorBuffer = errorBuffer
    }

    init?() {
        guard let handle = curl_easy_init() else { return nil }
        self.handle = handle
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
    }

    func destroy() {
        curl_easy_cleanup(handle)
        errorBuffer.deallocate()
    }
}

/// Easy handles of finished transfers, reset to libcurl's defaults and handed to the next:
/// creating one costs a 16 KB buffer and a few dozen allocations. Only the handle is kept,
/// never a connection (transfers that ask for a fresh one still get one) or a TLS session.
final class HandlePool: Sendable {
    private let idle = Mutex<[PooledCurl]>([])
    /// Handles kept at most; one more than this is cleaned up instead.
    let capacity: Int

    init(capacity: Int = 64) {
        self.capacity = capacity
    }

    deinit {
        for pooled in idle.withLock({ $0 }) { pooled.destroy() }
    }

    func take() -> PooledCurl? {
        idle.withLock { $0.popLast() }
    }

    func give(_ pooled: PooledCurl) {
        // libcurl before 8.8 never clears a handle's saved errno (CURLINFO_OS_ERRNO), not even on
        // reset: a handle whose transfer failed in a socket call would lend its errno to the
        // next transfer's failure, and the classifier reads it. Such a handle is not kept.
        var osErrno = 0
        lookout_curl_getinfo_long(pooled.handle, CURLINFO_OS_ERRNO, &osErrno)
        guard osErrno == 0 else { return pooled.destroy() }
        curl_easy_reset(pooled.handle)
        let kept = idle.withLock { idle -> Bool in
            guard idle.count < capacity else { return false }
            idle.append(pooled)
            return true
        }
        if !kept { pooled.destroy() }
    }

    var idleCount: Int { idle.withLock { $0.count } }
}

enum CurlGlobal {
    private static let initialized: Bool = {
        curl_global_init(Int(CURL_GLOBAL_ALL))
        return true
    }()

    static func ensureInitialized() { _ = initialized }
}
