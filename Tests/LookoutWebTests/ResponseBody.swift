import MicroHTTPServer

extension HTTPResponse {
    /// The bytes of a plain or owned body; empty for a stream or a dropped connection.
    var bodyBytes: [UInt8] {
        switch body {
        case .bytes(let bytes): return bytes
        case .owned(let owned): return Array(UnsafeRawBufferPointer(start: owned.pointer, count: owned.count))
        default: return []
        }
    }

    /// The body as UTF-8 text.
    var bodyText: String { String(decoding: bodyBytes, as: UTF8.self) }
}
