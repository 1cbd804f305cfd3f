import Foundation
import Testing

@testable import LookoutCore

@Suite("dns source urls")
struct DNSTargetTests {
    @Test func readsServerPortNameAndOptions() throws {
        let target = try DNSTarget.parse("dns://[::1]:5353/example.com?type=mx&transport=tcp&recursion=false").get()
        #expect(target == DNSTarget(server: "::1", port: 5353, name: "example.com", type: "MX", overTCP: true, recursionDesired: false))
        #expect(try DNSTarget.parse("dns://9.9.9.9/example.com").get() == DNSTarget(server: "9.9.9.9", port: 53, name: "example.com"))
        // DNS over TLS: port 853 unless given, over TCP, trusting the source's ca_file.
        let tls = try DNSTarget.parse("dns://9.9.9.9/example.com?transport=tls").get()
        #expect(tls == DNSTarget(server: "9.9.9.9", port: 853, name: "example.com", overTLS: true))
        let query = tls.query(timeout: .seconds(2), caFile: "/etc/ca.pem")
        #expect(query.overTCP && query.tls?.caFile == "/etc/ca.pem" && query.tls?.verify == true)
        #expect(try DNSTarget.parse("dns://9.9.9.9:8853/example.com?transport=tls").get().port == 8853)
        #expect(try DNSTarget.parse("dns://9.9.9.9/example.com").get().query(timeout: .seconds(2)).tls == nil)
        // Escapes decode in the name and the options; an empty option is no option.
        let escaped = try DNSTarget.parse("DNS://9.9.9.9/ex%61mple.com?type=%4Dx&&class=ch&").get()
        #expect(escaped == DNSTarget(server: "9.9.9.9", port: 53, name: "example.com", type: "MX", recordClass: "CH"))
    }

    @Test(arguments: [
        ("dns://resolver.example/example.com", "the server must be an IP address"),
        ("dns://9.9.9.9", "names no domain"),
        ("dns://9.9.9.9/ex%FFample.com", "names no domain"),
        ("dns://9.9.9.9/example.com?type=BOGUS", "is not a record type"),
        ("dns://9.9.9.9/example.com?transport=quic", "is not a transport"),
        ("dns://9.9.9.9/example.com?speed=fast", "is not a dns:// option"),
        ("dns://9.9.9.9:70000/example.com", "a port is 1 to 65535"),
        ("http://9.9.9.9/example.com", "is not a dns:// address"),
        ("dns://9.9.9.9/exa mple.com", "holds a space"),
    ])
    func refusesWhatCannotBeAsked(url: String, problem: String) {
        let message = DNSProber.urlProblem(url) ?? ""
        #expect(message.contains(problem), "\(message)")
    }

    @Test func aConfigNamesTheProblemAtTheSource() {
        #expect(throws: ConfigError.self) {
            try ConfigLoader.parse("sources: [{name: d, kind: dns, url: \"dns://ns.example/x\"}]\n", file: "t.yml")
        }
    }
}
