// lookout-fuzz: libFuzzer targets for every parser of outside input (`make fuzz`), and, in a
// normal build, a replayer that runs committed inputs through the same targets (`make test`).
import Foundation
import LookoutCore
import ResilientHTTP

#if LOOKOUT_FUZZ
    /// libFuzzer's entry for programs with their own `main` (clang's FuzzerInterface.h).
    // swift-format-ignore: AlwaysUseLowerCamelCase
    @_silgen_name("LLVMFuzzerRunDriver")
    func LLVMFuzzerRunDriver(
        _ argc: UnsafeMutablePointer<Int32>,
        _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
        _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
    ) -> Int32

    /// The target libFuzzer drives; set once before the driver starts, read on its one thread.
    nonisolated(unsafe) var selected = FuzzTarget.config
#endif

@main
struct LookoutFuzz {
    static let usage = """
        usage: lookout-fuzz TARGET [FILE|DIR ...]            replay inputs (any build)
               lookout-fuzz TARGET [libFuzzer options] CORPUS  fuzz (a -DLOOKOUT_FUZZ build: make fuzz)
               lookout-fuzz --version
        targets: \(FuzzTarget.allCases.map(\.rawValue).joined(separator: ", "))
        """

    static func main() {
        var arguments = CommandLine.arguments
        if arguments.count == 2 && arguments[1] == "--version" {
            print(LookoutVersion.string)
            exit(0)
        }
        guard arguments.count >= 2, let target = FuzzTarget(rawValue: arguments[1]) else {
            FileHandle.standardError.write(Data((usage + "\n").utf8))
            exit(2)
        }
        arguments.remove(at: 1)
        #if LOOKOUT_FUZZ
            selected = target
            var argc = Int32(arguments.count)
            var argv = arguments.map { strdup($0) } + [nil]
            let status = argv.withUnsafeMutableBufferPointer { buffer -> Int32 in
                var pointer = buffer.baseAddress
                return LLVMFuzzerRunDriver(&argc, &pointer) { data, size in
                    selected.run(size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size)))
                    return 0
                }
            }
            exit(status)
        #else
            var count = 0
            for path in arguments.dropFirst() {
                for file in files(at: path) {
                    guard let data = FileManager.default.contents(atPath: file) else { continue }
                    target.run(Array(data))
                    count += 1
                }
            }
            print("\(target.rawValue): \(count) input\(count == 1 ? "" : "s") replayed, none crashed")
        #endif
    }

    static func files(at path: String) -> [String] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return [] }
        guard isDirectory.boolValue else { return [path] }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        return names.sorted().filter { !$0.hasPrefix(".") }.map { path + "/" + $0 }
    }
}
