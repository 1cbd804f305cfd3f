import Foundation
import ResilientHTTP

extension ProbeModule {
    /// The module's connection settings on a transfer: who is trusted and how (`ca_file`,
    /// `insecure_skip_verify`, versions, a client certificate, `server_name`) and which proxy
    /// it goes through. Used by `/probe` and by a source that names the module.
    package func applyConnection(to transfer: inout TransferRequest, fallbackCAFile: String? = nil) {
        transfer.caFile = caFile ?? fallbackCAFile
        transfer.skipsCertificateVerification = insecureSkipVerify
        transfer.tlsMinimumMinor = tlsMinimumMinor
        transfer.tlsMaximumMinor = tlsMaximumMinor
        transfer.clientCertificate = clientCertificate.map { ($0.certificate, $0.key) }
        transfer.tlsServerName = serverName
        transfer.proxy = proxyURL
        transfer.noProxy = noProxy
        if proxyURL == nil {
            // libcurl would read http_proxy and the like itself: a module goes through a proxy
            // only where it says so ("" turns libcurl's own reading off).
            transfer.proxy = proxyFromEnvironment ? EnvironmentProxy.proxy(for: transfer.url, environment: ProcessInfo.processInfo.environment) ?? "" : ""
        }
        transfer.proxyHeaders = proxyHeaders.map { ($0.name, $0.value) }
        transfer.forbidsHTTP2 = forbidsHTTP2
        transfer.onlyIPVersion = onlyIPVersion
        transfer.preferredIPVersion = preferredIPVersion
        transfer.localAddress = sourceAddress
    }
}
