// lookout-sim: a deterministic, fault-injecting upstream for Lookout's tests, benchmarks and demo.
import ArgumentParser
import Foundation
import LookoutCore
import MicroHTTPServer
import ResilientHTTP

@main
struct LookoutSim: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lookout-sim",
        abstract: "A deterministic upstream that injects faults, for Lookout's tests and demo.",
        version: LookoutVersion.string)

    @Option(help: "Address to listen on (HOST:PORT; port 0 picks a free one).")
    var listen = "127.0.0.1:9480"

    @Option(help: "PEM certificate file: serve HTTPS (with --tls-key).")
    var tlsCert: String?

    @Option(help: "PEM private key file for --tls-cert.")
    var tlsKey: String?

    @Option(help: "Also answer DNS for the zone lookout.test. on UDP and TCP (IPV4:PORT; port 0 picks a free one).")
    var dnsListen: String?

    func run() async throws {
        var tls: (keyPEM: String, certificatePEM: String)?
        if tlsCert != nil || tlsKey != nil {
            guard let tlsCert, let tlsKey else { throw ValidationError("--tls-cert and --tls-key go together") }
            guard let cert = try? String(contentsOfFile: tlsCert, encoding: .utf8) else {
                throw ValidationError("cannot read the certificate \(tlsCert)")
            }
            guard let key = try? String(contentsOfFile: tlsKey, encoding: .utf8) else {
                throw ValidationError("cannot read the key \(tlsKey)")
            }
            tls = (key, cert)
        }
        guard let (host, port) = HTTPServerConfiguration.parseAddress(listen) else {
            throw ValidationError("--listen \(listen) is not HOST:PORT")
        }
        var dns: SimulatedDNS?
        if let dnsListen {
            guard let (dnsHost, dnsPort) = HTTPServerConfiguration.parseAddress(dnsListen), !dnsHost.contains(":") else {
                throw ValidationError("--dns-listen \(dnsListen) is not IPV4:PORT")
            }
            do {
                dns = try SimulatedDNS(host: dnsHost, port: dnsPort)
            } catch {
                FileHandle.standardError.write(Data("lookout-sim: \(error)\n".utf8))
                throw ExitCode(1)
            }
        }
        let simulator = Simulator()
        let server = HTTPServer(
            configuration: .init(
                host: host, port: port, connectionLimit: 4096, connectionTimeoutSeconds: 30,
                maxRequestBodyBytes: 4 << 20, tls: tls),
            router: simulator.router())
        do {
            try server.start()
        } catch {
            FileHandle.standardError.write(Data("lookout-sim: \(error)\n".utf8))
            throw ExitCode(1)
        }
        let shown = host.contains(":") ? "[\(host)]" : host
        let scheme = tls == nil ? "http" : "https"
        FileHandle.standardOutput.write(Data("lookout-sim listening on \(scheme)://\(shown):\(server.port)/\n".utf8))
        if let dns {
            dns.start()
            FileHandle.standardOutput.write(Data("lookout-sim answering DNS for lookout.test. on \(shown):\(dns.port) (udp, tcp)\n".utf8))
        }
        await ProcessSignals.waitForTermination()
        await server.stop()
    }
}
