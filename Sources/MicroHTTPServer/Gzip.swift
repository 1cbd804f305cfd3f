internal import CZlib

/// gzip (RFC 1952) for response bodies a client accepts compressed, such as a Prometheus scrape.
///
/// ```swift
/// if Gzip.accepted(by: request) { body = Gzip.compress(bytes) }
/// ```
public enum Gzip {
    /// Whether the request's `Accept-Encoding` lists gzip (and does not refuse it with `q=0`).
    public static func accepted(by request: HTTPRequest) -> Bool {
        guard let header = request.headers["Accept-Encoding"] else { return false }
        for item in header.lowercased().split(separator: ",") {
            let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.first == "gzip" || parts.first == "*" else { continue }
            let refused = parts.dropFirst().contains {
                $0.replacingOccurrences(of: " ", with: "").hasPrefix("q=0") && !$0.contains(where: { ("1"..."9").contains($0) })
            }
            return !refused
        }
        return false
    }

    /// `bytes` compressed at `level` (1: fastest; a metrics page compresses about 10× even so);
    /// nil if zlib fails, in which case the caller sends the bytes as they are.
    public static func compress(_ bytes: UnsafeRawBufferPointer, level: Int32 = 1) -> OwnedBytes? {
        var stream = z_stream()
        guard lookout_zlib_gzip_init(&stream, level) == Z_OK else { return nil }
        defer { deflateEnd(&stream) }
        let capacity = Int(deflateBound(&stream, uLong(bytes.count)))
        let output = UnsafeMutableRawPointer.allocate(byteCount: max(capacity, 64), alignment: 1)
        stream.next_in = UnsafeMutablePointer(mutating: bytes.baseAddress?.assumingMemoryBound(to: Bytef.self))
        stream.avail_in = uInt(bytes.count)
        stream.next_out = output.assumingMemoryBound(to: Bytef.self)
        stream.avail_out = uInt(max(capacity, 64))
        guard deflate(&stream, Z_FINISH) == Z_STREAM_END else {
            output.deallocate()
            return nil
        }
        return OwnedBytes(takingOwnershipOf: output, count: Int(stream.total_out))
    }
}
