import Foundation

/// Starts `Scripts/grpc-health-server.py` (a real gRPC server, Debian's python3-grpcio) on a free
/// loopback port; returns it with the port. Without `health` it has no health service at all.
public func startGRPCHealthServer(health: Bool = true) async throws -> (ChildProcess, Int) {
    let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Scripts/grpc-health-server.py").path
    let server = try ChildProcess("/usr/bin/python3", [script] + (health ? [] : ["--no-health"]))
    let port = try await server.waitFor(#"listening (\d+)"#)
    guard let number = Int(port) else { throw TestFailure("the gRPC server printed no port") }
    return (server, number)
}

/// Starts `Scripts/banner-server.py`, a line-based TCP server (an SMTP-like banner, `EHLO`
/// answered) on a free loopback port; returns it with its port.
public func startBannerServer() async throws -> (ChildProcess, Int) {
    let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Scripts/banner-server.py").path
    let server = try ChildProcess("/usr/bin/python3", ["-u", script])
    guard let port = Int(try await server.waitFor(#"listening (\d+)"#)) else { throw TestFailure("the banner server printed no port") }
    return (server, port)
}

/// The banner server with a certificate: STARTTLS on its first port, TLS from the first byte on
/// its second. Returns it with both ports.
public func startBannerServer(cert: String, key: String) async throws -> (ChildProcess, plain: Int, tls: Int) {
    let (server, ports) = try await startBannerServerWithPostgres(cert: cert, key: key)
    return (server, ports.plain, ports.tls)
}

/// The banner server with a certificate, and its two PostgreSQL ports: one answers SSLRequest
/// with S and shakes hands, the other answers N.
public func startBannerServerWithPostgres(cert: String, key: String) async throws -> (
    ChildProcess, ports: (plain: Int, tls: Int, postgres: Int, postgresPlain: Int)
) {
    let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Scripts/banner-server.py").path
    let server = try ChildProcess("/usr/bin/python3", ["-u", script, "--cert", cert, "--key", key])
    guard let port = Int(try await server.waitFor(#"^listening (\d+)"#)), let tls = Int(try await server.waitFor(#"(?m)^tls listening (\d+)"#)),
        let postgres = Int(try await server.waitFor(#"(?m)^postgres listening (\d+)"#)),
        let postgresPlain = Int(try await server.waitFor(#"(?m)^postgres-plain listening (\d+)"#))
    else {
        throw TestFailure("the banner server printed no ports")
    }
    return (server, (port, tls, postgres, postgresPlain))
}

/// Starts `Scripts/hostile-dns.py`, a DNS server that forges IDs, answers zeros and truncates
/// by the name asked (UDP and TCP on one port). Returns it with its port.
public func startHostileDNSServer() async throws -> (ChildProcess, Int) {
    let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Scripts/hostile-dns.py").path
    let server = try ChildProcess("/usr/bin/python3", ["-u", script])
    guard let port = Int(try await server.waitFor(#"listening (\d+)"#)) else { throw TestFailure("the DNS server printed no port") }
    return (server, port)
}

/// Starts `Scripts/http-proxy.py`, a forward proxy for plain http:// on a free loopback port;
/// it prints "proxied METHOD URL" for each request. Returns it with its port.
public func startHTTPProxy() async throws -> (ChildProcess, Int) {
    let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Scripts/http-proxy.py").path
    let proxy = try ChildProcess("/usr/bin/python3", [script])
    guard let port = Int(try await proxy.waitFor(#"listening (\d+)"#)) else { throw TestFailure("the proxy printed no port") }
    return (proxy, port)
}

/// Starts `Scripts/dot-relay.py`: DNS over TLS with `cert`, relayed to `upstream` (a DNS server
/// over TCP), or answering `garbage` or a `short` message. Returns it with its port.
public func startDNSOverTLSRelay(cert: String, key: String, upstream: String, mode: String = "relay") async throws -> (ChildProcess, Int) {
    let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Scripts/dot-relay.py").path
    let relay = try ChildProcess("/usr/bin/python3", ["-u", script, "--cert", cert, "--key", key, "--upstream", upstream, "--mode", mode])
    guard let port = Int(try await relay.waitFor(#"listening (\d+)"#)) else { throw TestFailure("the DNS over TLS relay printed no port") }
    return (relay, port)
}

/// Debian's dnsmasq as a DNS server on a free loopback port (UDP and TCP), answering for
/// `lookout.test` from its own records only: `api.lookout.test` A 127.0.0.7, `lookout.test` MX
/// 10 `mail.lookout.test`, NXDOMAIN for other names there, REFUSED for names elsewhere (it has
/// no upstream).
///
/// It runs detached (`setsid -f`), not as the test process's child: started as a child, the
/// children started after it were never reaped (openssl and lookout-sim stayed zombies and
/// Foundation's `Process` never saw them exit). `stop()` kills it by its pid file.
public struct Dnsmasq: Sendable {
    public let address: String
    let pidFile: String
    /// The SOA serial of lookout.test.
    public static let serial: UInt32 = 2_026_112_801

    /// `silentUpstream`: a UDP port that takes questions and never answers, which dnsmasq
    /// forwards `slow.test` to (a real resolver whose upstream is gone).
    /// `authoritative`: answers for lookout.test as its authoritative server, SOA included
    /// (dnsmasq then refuses to forward anything else).
    public static func start(in directory: URL, silentUpstream: UInt16? = nil, authoritative: Bool = false) async throws -> Dnsmasq {
        let port = closedPort()
        let pidFile = directory.appendingPathComponent("dnsmasq-\(port).pid").path
        let log = directory.appendingPathComponent("dnsmasq-\(port).log").path
        let started = try await runTool(
            "/usr/bin/setsid",
            [
                "-f", "/usr/sbin/dnsmasq", "--keep-in-foreground", "--no-resolv", "--no-hosts", "--port=\(port)", "--listen-address=127.0.0.1",
                "--bind-interfaces", "--user=root", "--group=root", "--pid-file=\(pidFile)", "--log-facility=\(log)",
                "--host-record=api.lookout.test,127.0.0.7,fd00::7", "--mx-host=lookout.test,mail.lookout.test,10", "--local=/lookout.test/",
            ] + (silentUpstream.map { ["--server=/slow.test/127.0.0.1#\($0)"] } ?? [])
                // Authoritative for lookout.test, with an SOA whose serial the tests read.
                + (authoritative
                    ? ["--auth-server=ns.lookout.test,127.0.0.1", "--auth-zone=lookout.test", "--auth-soa=\(Dnsmasq.serial),hostmaster.lookout.test"] : []))
        guard started.status == 0 else { throw TestFailure("dnsmasq did not start: \(started.output)") }
        let dnsmasq = Dnsmasq(address: "127.0.0.1:\(port)", pidFile: pidFile)
        _ = try await eventually(deadline: .seconds(30), "dnsmasq to start") { () -> Bool? in
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            return text.contains("cleared cache") && dnsmasq.pid != nil ? true : nil
        }
        return dnsmasq
    }

    var pid: Int32? {
        (try? String(contentsOfFile: pidFile, encoding: .utf8)).flatMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }

    public func stop() {
        if let pid { kill(pid, SIGKILL) }
    }
}
