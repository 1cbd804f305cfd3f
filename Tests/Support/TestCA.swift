import Foundation

/// A certificate authority made by a test with openssl: leaf certificates for 127.0.0.1 with any
/// validity window and names, signed by it (`openssl ca`, which takes start and end dates).
public struct TestCA {
    public let directory: URL
    /// The CA's certificate: what a client is told to trust.
    public let certificate: String
    let key: String
    let config: String

    public init(in directory: URL) throws {
        self.directory = directory
        certificate = directory.appendingPathComponent("ca.pem").path
        key = directory.appendingPathComponent("ca.key").path
        config = directory.appendingPathComponent("ca.cnf").path
        try "".write(toFile: directory.appendingPathComponent("index.txt").path, atomically: true, encoding: .utf8)
        try """
        [ca]
        default_ca = test
        [test]
        dir = \(directory.path)
        database = \(directory.path)/index.txt
        new_certs_dir = \(directory.path)
        serial = \(directory.path)/serial
        default_md = sha256
        policy = anything
        copy_extensions = copy
        unique_subject = no
        [anything]
        commonName = supplied
        organizationName = optional
        """.write(toFile: config, atomically: true, encoding: .utf8)
        try "1000\n".write(toFile: directory.appendingPathComponent("serial").path, atomically: true, encoding: .utf8)
        let made = try runToolBlocking(
            "/usr/bin/openssl",
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", certificate, "-days", "3650",
                "-subj", "/O=Lookout Test CA/CN=Lookout Test CA",
            ])
        guard made.status == 0 else { throw TestFailure("openssl could not make a CA: \(made.output)") }
    }

    /// A leaf certificate named `name`, valid from `notBefore` to `notAfter`, for
    /// `alternativeNames`; returns its certificate and key paths.
    public func issue(_ name: String, notBefore: Date, notAfter: Date, alternativeNames: String = "IP:127.0.0.1") throws -> (cert: String, key: String) {
        let key = directory.appendingPathComponent("\(name).key").path
        let request = directory.appendingPathComponent("\(name).csr").path
        let cert = directory.appendingPathComponent("\(name).pem").path
        let asked = try runToolBlocking(
            "/usr/bin/openssl",
            [
                "req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", request, "-subj", "/O=Lookout Test/CN=\(name)",
                "-addext", "subjectAltName=\(alternativeNames)",
            ])
        guard asked.status == 0 else { throw TestFailure("openssl could not make a request: \(asked.output)") }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyyMMddHHmmss'Z'"
        let signed = try runToolBlocking(
            "/usr/bin/openssl",
            [
                "ca", "-batch", "-config", config, "-cert", certificate, "-keyfile", self.key, "-in", request, "-out", cert,
                "-startdate", formatter.string(from: notBefore), "-enddate", formatter.string(from: notAfter), "-notext",
            ])
        guard signed.status == 0 else { throw TestFailure("openssl could not sign \(name): \(signed.output)") }
        return (cert, key)
    }
}
