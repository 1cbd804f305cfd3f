import Foundation

/// Reloads the config when its file changes: every few seconds it reads the file and compares the
/// bytes with the last ones seen. Reading (not the modification time) is what works for a
/// Kubernetes ConfigMap, which is replaced through a symlink swap that keeps old timestamps, and
/// needs no sidecar, no signal and no shared process namespace. A file that cannot be read is
/// left for the next look; a changed file with problems is reported by the reload and the
/// running config stays.
package struct ConfigWatcher: Sendable {
    package let path: String
    package let every: Duration

    package init(path: String, every: Duration = .seconds(5)) {
        self.path = path
        self.every = every
    }

    /// Watches until cancelled, calling `reload` once per change.
    package func run(reload: @Sendable () -> Void) async {
        var last = FileManager.default.contents(atPath: path)
        while !Task.isCancelled {
            do { try await Task.sleep(for: every) } catch { return }
            guard let now = FileManager.default.contents(atPath: path), now != last else { continue }
            last = now
            reload()
        }
    }
}
