internal import CZlib
import MicroHTTPServer
import Synchronization

/// `/gzip-bomb/BYTES`: BYTES zero bytes gzip-compressed (a 1 GiB bomb is about 1 MiB on the
/// wire), sent with `Content-Encoding: gzip` whatever the client asked for, for what a client
/// that decodes holds. Each size is compressed once and kept.
extension Simulator {
    static let maxBombBytes = 4 << 30
    private static let bombs = Mutex<[Int: [UInt8]]>([:])

    func gzipBomb(_ request: HTTPRequest) async -> HTTPResponse {
        guard let size = Int(request.pathParameters["bytes"] ?? ""), size >= 0, size <= Simulator.maxBombBytes else {
            return .text("size must be a number of bytes up to \(Simulator.maxBombBytes)\n", status: 400)
        }
        let cached = Simulator.bombs.withLock { $0[size] }
        guard let body = cached ?? Simulator.compressedZeros(size) else { return .text("cannot compress\n", status: 500) }
        if cached == nil { Simulator.bombs.withLock { $0[size] = body } }
        return HTTPResponse(headers: ["Content-Encoding": "gzip", "Content-Type": "text/plain"], body: .bytes(body))
    }

    /// `count` zero bytes as one gzip member, compressed 1 MiB at a time.
    static func compressedZeros(_ count: Int) -> [UInt8]? {
        var stream = z_stream()
        guard lookout_zlib_gzip_init(&stream, 9) == Z_OK else { return nil }
        defer { deflateEnd(&stream) }
        let zeros = [UInt8](repeating: 0, count: 1 << 20)
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        var left = count
        while true {
            let feed = min(left, zeros.count)
            left -= feed
            let flush = left == 0 ? Z_FINISH : Z_NO_FLUSH
            let status: Int32 = zeros.withUnsafeBytes { input in
                stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
                stream.avail_in = uInt(feed)
                var status = Z_OK
                repeat {
                    status = chunk.withUnsafeMutableBytes { out in
                        stream.next_out = out.baseAddress?.assumingMemoryBound(to: Bytef.self)
                        stream.avail_out = uInt(out.count)
                        return deflate(&stream, flush)
                    }
                    output += chunk[0..<(chunk.count - Int(stream.avail_out))]
                } while stream.avail_out == 0 && status == Z_OK
                return status
            }
            if flush == Z_FINISH { return status == Z_STREAM_END ? output : nil }
            guard status == Z_OK || status == Z_BUF_ERROR else { return nil }
        }
    }
}
