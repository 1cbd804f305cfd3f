import Testing

@testable import ResilientHTTP

/// The hosts file as Go's resolver reads it, for `localhost` with one IP version.
@Suite("localhost resolution")
struct LocalhostResolutionTests {
    static let hosts = """
        # comment ::1 localhost
        127.0.0.1\tlocalhost runsc
        127.0.1.1 vm.local vm # localhost in a comment
        ::ffff:127.0.0.1 localhost
        ::1     ip6-localhost ip6-loopback LOCALHOST
        fe80::1 dev.localhost

        """

    @Test func addressesOfTheVersionAskedFor() {
        #expect(LocalhostResolution.addresses(of: "localhost", version: 4, hosts: Self.hosts) == ["127.0.0.1"])
        // Names are matched in any case; a v4-mapped address is not IPv6.
        #expect(LocalhostResolution.addresses(of: "localhost", version: 6, hosts: Self.hosts) == ["::1"])
        #expect(LocalhostResolution.addresses(of: "dev.localhost", version: 6, hosts: Self.hosts) == ["fe80::1"])
        #expect(LocalhostResolution.addresses(of: "localhost", version: 6, hosts: "127.0.0.1 localhost\n").isEmpty)
        #expect(LocalhostResolution.addresses(of: "vm", version: 4, hosts: Self.hosts) == ["127.0.1.1"])
    }

    @Test func onlyLocalhostNamesAreReadThisWay() {
        #expect(LocalhostResolution.isLocalhost("LocalHost"))
        #expect(LocalhostResolution.isLocalhost("api.localhost"))
        #expect(!LocalhostResolution.isLocalhost("localhost.example.com"))
        #expect(!LocalhostResolution.isLocalhost("mylocalhost"))
    }

    /// Every blackbox module's request names an IP version; only localhost's are read here.
    @Test func otherHostsAreLeftToLibcurl() {
        var request = TransferRequest(url: "http://127.0.0.1:8080/localhost", timeout: .seconds(1))
        request.preferredIPVersion = 6
        #expect(LocalhostResolution.resolve(request) == nil)  // "localhost" only in the path
        request.url = "http://example.com/"
        #expect(LocalhostResolution.resolve(request) == nil)
        request.preferredIPVersion = nil
        request.url = "http://localhost:8080/"
        #expect(LocalhostResolution.resolve(request) == nil)  // no version named: libcurl's own answer
    }
}
