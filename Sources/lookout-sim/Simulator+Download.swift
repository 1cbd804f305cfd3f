import MicroHTTPServer
import ResilientHTTP

/// `/download/BYTES?seed=S`: the same bytes for the same size and seed, every time, with Range,
/// If-Range, ETag and `X-Content-SHA256`; `truncate_at=K` drops the connection at byte K of the
/// file, `corrupt=1` flips the middle byte.
extension Simulator {
    static let maxDownloadBytes: UInt64 = 16 << 30

    func download(_ request: HTTPRequest) async -> HTTPResponse {
        guard let total = UInt64(request.pathParameters["bytes"] ?? ""), total <= Simulator.maxDownloadBytes else {
            return .text("size must be a number of bytes up to \(Simulator.maxDownloadBytes)\n", status: 400)
        }
        let seed = UInt64(request.query["seed"] ?? "") ?? 1
        let truncateAt = request.query["truncate_at"].flatMap { UInt64($0) }
        let corrupt = request.query["corrupt"] == "1"
        let etag = "\"sim-\(seed)-\(total)\""
        var range: ClosedRange<UInt64>?
        if let header = request.headers["Range"], total > 0 {
            let ifRange = request.headers["If-Range"]
            if ifRange == nil || ifRange == etag {
                guard let parsed = Simulator.parseRange(header, total: total) else {
                    return HTTPResponse(status: 416, headers: ["Content-Range": "bytes */\(total)"], body: .bytes([]))
                }
                range = parsed
            }
        }
        let start = range?.lowerBound ?? 0
        let end = range.map { $0.upperBound + 1 } ?? total
        var headers: HTTPHeaders = [
            "Content-Type": "application/octet-stream", "ETag": etag, "Accept-Ranges": "bytes",
            "X-Content-SHA256": digest(total: total, seed: seed),
        ]
        if let range { headers.set("Content-Range", "bytes \(range.lowerBound)-\(range.upperBound)/\(total)") }
        return HTTPResponse(
            status: range == nil ? 200 : 206, headers: headers,
            body: .stream(contentLength: end - start) { writer in
                var offset = start
                while offset < end {
                    let chunkEnd = min(end, offset + 64 * 1024)
                    if let truncateAt, truncateAt > start, truncateAt >= offset, truncateAt < chunkEnd {
                        try await writer.write(Simulator.bytes(seed: seed, from: offset, to: truncateAt, corruptAt: corrupt ? total / 2 : nil))
                        writer.abort()
                        return
                    }
                    try await writer.write(Simulator.bytes(seed: seed, from: offset, to: chunkEnd, corruptAt: corrupt ? total / 2 : nil))
                    offset = chunkEnd
                }
            })
    }

    /// The SHA-256 of the uncorrupted file, computed once per size and seed.
    func digest(total: UInt64, seed: UInt64) -> String {
        let key = "\(total)-\(seed)"
        if let known = digests.withLock({ $0[key] }) { return known }
        let hasher = SHA256()
        var offset: UInt64 = 0
        while offset < total {
            let end = min(total, offset + 1 << 20)
            hasher.update(Simulator.bytes(seed: seed, from: offset, to: end, corruptAt: nil))
            offset = end
        }
        let hex = hasher.finalizeHex()
        digests.withLock { $0[key] = hex }
        return hex
    }

    /// Bytes [from, to) of the file for `seed`: the 8 little-endian bytes of SplitMix64 per
    /// 8-byte block, so any range can be produced without the bytes before it.
    static func bytes(seed: UInt64, from: UInt64, to: UInt64, corruptAt: UInt64?) -> [UInt8] {
        let firstBlock = from / 8
        let lastBlock = (to + 7) / 8
        var blocks = [UInt64](repeating: 0, count: Int(lastBlock - firstBlock))
        for index in blocks.indices {
            blocks[index] = splitMix64(seed &+ (firstBlock + UInt64(index)) &* 0x9E37_79B9_7F4A_7C15).littleEndian
        }
        var out = blocks.withUnsafeBytes { raw in
            Array(raw[Int(from - firstBlock * 8)..<Int(to - firstBlock * 8)])
        }
        if let corruptAt, corruptAt >= from, corruptAt < to {
            out[Int(corruptAt - from)] ^= 0xFF
        }
        return out
    }

    static func splitMix64(_ input: UInt64) -> UInt64 {
        var z = input &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// `bytes=A-`, `bytes=A-B` or `bytes=-N` (one range only).
    static func parseRange(_ header: String, total: UInt64) -> ClosedRange<UInt64>? {
        guard header.hasPrefix("bytes="), !header.contains(",") else { return nil }
        let spec = header.dropFirst("bytes=".count)
        let parts = spec.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        if parts[0].isEmpty {
            guard let suffix = UInt64(parts[1]), suffix > 0 else { return nil }
            return (total - min(total, suffix))...(total - 1)
        }
        guard let first = UInt64(parts[0]), first < total else { return nil }
        let last = parts[1].isEmpty ? total - 1 : min(total - 1, UInt64(parts[1]) ?? total - 1)
        return first <= last ? first...last : nil
    }
}
