internal import CLibCrypto

/// SHA-256 from OpenSSL's libcrypto, fed incrementally.
///
/// ```swift
/// var hasher = SHA256()
/// hasher.update(Array("abc".utf8))
/// hasher.finalizeHex() // "ba7816bf..."
/// ```
public final class SHA256 {
    private let context: OpaquePointer

    /// A fresh hasher; its OpenSSL context is freed with it.
    public init() {
        context = lookout_sha256_new()
    }

    deinit {
        lookout_sha256_free(context)
    }

    /// Feeds `bytes`; may be called any number of times before `finalize`.
    public func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress else { return }
        lookout_sha256_update(context, base, bytes.count)
    }

    /// Feeds `bytes`; may be called any number of times before `finalize`.
    public func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// The 32-byte digest; the hasher must not be used afterwards.
    public func finalize() -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        lookout_sha256_final(context, &digest)
        return digest
    }

    /// The digest as 64 lowercase hex digits.
    public func finalizeHex() -> String {
        finalize().hexString
    }

    /// The hex digest of `bytes`.
    public static func hex(_ bytes: [UInt8]) -> String {
        let hasher = SHA256()
        hasher.update(bytes)
        return hasher.finalizeHex()
    }

    /// HMAC-SHA256 of `message` under `key`, as 64 hex digits.
    public static func hmacHex(key: [UInt8], message: [UInt8]) -> String {
        var digest = [UInt8](repeating: 0, count: 32)
        _ = key.withUnsafeBytes { keyBytes in
            message.withUnsafeBytes { messageBytes in
                lookout_hmac_sha256(
                    keyBytes.baseAddress, Int32(key.count),
                    messageBytes.baseAddress?.assumingMemoryBound(to: UInt8.self), message.count, &digest)
            }
        }
        return digest.hexString
    }

    /// Compares two byte strings in time that does not depend on where they differ.
    public static func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        return a.withUnsafeBytes { x in b.withUnsafeBytes { y in lookout_memcmp_consttime(x.baseAddress, y.baseAddress, a.count) == 0 } }
    }
}

@available(*, unavailable)
extension SHA256: Sendable {}

extension SHA256 {
    /// Whether two secrets are equal, in a time that says nothing of where they differ or how
    /// long the expected one is: their digests (always 32 bytes) are compared in constant time.
    public static func secretsEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        func digest(_ bytes: [UInt8]) -> [UInt8] {
            let hash = SHA256()
            hash.update(bytes)
            return hash.finalize()
        }
        return constantTimeEquals(digest(a), digest(b))
    }
}

extension [UInt8] {
    /// Lowercase hex digits of the bytes.
    public var hexString: String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(count * 2)
        for byte in self {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
