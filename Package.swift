// swift-tools-version:6.0
// Lookout: a resilient monitor for the HTTP sources a product depends on.
import PackageDescription

// How the service (and its floor, so the two compare) is linked: with LLVM's lld, which ships with
// the toolchain, packing the relative relocations (`-z pack-relative-relocs`, DT_RELR, read by
// glibc 2.36 and later: Debian 12). --static-swift-stdlib leaves 95,000 of them, a 2.3 MB table
// the loader reads at every start, 19 KB packed; gold, the default, cannot pack them. Resident
// memory at 100 sources, static build: 47.0 MiB with gold, 43.9 with lld, 42.3 packed.
// `--static-swift-stdlib` also links with `-export-dynamic` (the toolchain's
// static-stdlib-args.lnk): every public symbol of every module, 18,265 of them, in a 1.6 MB
// dynamic symbol table that nothing looks up (no plugin, no dlsym; the runtime finds types and
// conformances through its own sections), but that the loader hashes into at each start.
// `--no-export-dynamic`, later on the line, takes it back: RSS at 100 sources 37.2 → 35.7 MiB,
// the loader's relocation 2.78 → 1.41 M cycles (LD_DEBUG=statistics).
let leanLinking: [LinkerSetting] = [
    .unsafeFlags(
        ["-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs", "-Xlinker", "--no-export-dynamic"],
        .when(platforms: [.linux]))
]

// The service's code in the order it runs (`make link-order` writes the file, hottest first; the
// names are a release build's, so only a release build links by it): the
// functions a running monitor calls are laid out together instead of spread over 23 MB of text,
// where the kernel maps the pages around each one called. Resident memory at 100 sources, static
// build: 42.3 → 37.6 MiB. A name the code no longer has is skipped, so a stale file costs memory,
// never correctness.
let linkOrder: [LinkerSetting] = [
    .unsafeFlags(
        ["-Xlinker", "--symbol-ordering-file=\(Context.packageDirectory)/Sources/lookout/lookout.order", "-Xlinker", "--no-warn-symbol-ordering"],
        .when(platforms: [.linux], configuration: .release))
]

let package = Package(
    name: "Lookout",
    platforms: [.macOS("26.0")],  // InlineArray; Linux is the supported platform
    products: [
        .library(name: "ResilientHTTP", targets: ["ResilientHTTP"]),
        .library(name: "MicroHTTPServer", targets: ["MicroHTTPServer"]),
        .executable(name: "lookout", targets: ["lookout"]),
        .executable(name: "lookout-sim", targets: ["lookout-sim"]),
    ],
    // Exact versions: Package.resolved stays out of git, so a build anywhere (the Dockerfile's
    // included) gets the same code as CI.
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
        .package(url: "https://github.com/jpsim/Yams", exact: "6.2.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", exact: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", exact: "2.13.0"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache", exact: "2.1.1"),
    ],
    targets: [
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        .systemLibrary(
            name: "CMicroHTTPD",
            pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"])]
        ),
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        .systemLibrary(
            name: "CLibCrypto",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        .systemLibrary(
            name: "CLDNS",
            providers: [.apt(["libldns-dev"])]
        ),
        // Google's RE2 (Debian's libre2-dev) behind an `extern "C"` shim: plain C to Swift, so no
        // Swift module needs C++ interop (which every module importing it would have to enable).
        .target(
            name: "CRE2",
            linkerSettings: [.linkedLibrary("re2")]
        ),
        // Go's regular expressions in linear time, through CRE2: every pattern from outside.
        .target(name: "LinearRegex", dependencies: ["CRE2"]),
        .systemLibrary(
            name: "CPSL",
            pkgConfig: "libpsl",
            providers: [.apt(["libpsl-dev"])]
        ),
        // A host's registrable domain (the Public Suffix List, through libpsl) and what RDAP says
        // of its registration: domain_expiry's parts, no Lookout knowledge.
        .target(name: "DomainRegistration", dependencies: ["CPSL"]),
        // Five-field cron schedules read in a time zone: when a push source's job should call in.
        .target(name: "CronSchedule"),
        // glibc's malloc_trim, which the Glibc module does not declare.
        .target(name: "CMemory"),
        .target(
            name: "ResilientHTTP",
            dependencies: ["CCurl", "CLibCrypto"]
        ),
        // One DNS query to one server, through ldns: what `kind: dns` and blackbox's dns prober ask.
        .target(
            name: "DNSLookup",
            dependencies: ["CLDNS", "ClientSocket"]
        ),
        // One ICMP echo, unprivileged where the kernel allows it: what `kind: icmp` and blackbox's
        // icmp prober send.
        .target(name: "ICMPEcho", dependencies: ["ClientSocket"]),
        // A TCP client connection under one deadline, in TLS once asked (OpenSSL), and the
        // threads blocking calls run on: what TCPExchange's conversations, DNS and ICMP use.
        .target(name: "ClientSocket", dependencies: ["CLibCrypto"]),
        // A line-based TCP conversation (blackbox's tcp `query_response`, STARTTLS and TLS through
        // OpenSSL), and PostgreSQL's way to TLS.
        .target(name: "TCPExchange", dependencies: ["ClientSocket", "LinearRegex"]),
        .target(
            name: "MicroHTTPServer",
            dependencies: ["CMicroHTTPD", "CZlib"]
        ),
        .target(
            name: "LookoutCore",
            dependencies: [
                "ResilientHTTP", "DNSLookup", "ICMPEcho", "ClientSocket", "TCPExchange", "LinearRegex", "CronSchedule", "DomainRegistration", "CMemory",
                .product(name: "Yams", package: "Yams"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Mustache", package: "swift-mustache"),
            ]
        ),
        .target(
            name: "LookoutStore",
            dependencies: [
                "LookoutCore", "ResilientHTTP",
                .product(name: "GRDB", package: "GRDB.swift"),
                // The C API, for the one read that steps through 100,000 rows (HistoryStore.days).
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ]
        ),
        .target(
            name: "LookoutAlerting",
            dependencies: ["LookoutCore", "LookoutStore", "ResilientHTTP"]
        ),
        .target(
            name: "LookoutWeb",
            dependencies: [
                "LookoutCore", "LookoutStore", "LookoutAlerting", "MicroHTTPServer", "DNSLookup", "ICMPEcho", "TCPExchange", "ClientSocket", "CMemory",
            ]
        ),
        // The whole service built in one function (`LookoutApp.build`): what `serve` runs and what
        // an in-process test starts.
        .target(
            name: "LookoutService",
            dependencies: [
                "LookoutCore", "LookoutStore", "LookoutAlerting", "LookoutWeb", "MicroHTTPServer", "ResilientHTTP", "CMemory",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .executableTarget(
            name: "lookout",
            dependencies: [
                "LookoutService", "LookoutCore", "LookoutStore", "LookoutAlerting", "LookoutWeb",
                "ResilientHTTP", "MicroHTTPServer", "CMemory",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            // gperftools' tcmalloc in place of glibc's malloc (Debian's libtcmalloc-minimal4): every
            // probe allocates its task's frames and libcurl's 16 KiB buffer, sizes that take glibc's
            // slow path (bin sorting, fastbin consolidation); 0.93 × the CPU a probe side by side.
            exclude: ["lookout.order"],
            linkerSettings: [.linkedLibrary(":libtcmalloc_minimal.so.4")] + leanLinking + linkOrder
        ),
        .executableTarget(
            name: "lookout-sim",
            dependencies: [
                "MicroHTTPServer", "ResilientHTTP", "LookoutCore", "CZlib", "CLDNS",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "lookout-bench",
            dependencies: [
                "ResilientHTTP", "LookoutCore", "LookoutStore", "LookoutAlerting", "LookoutWeb", "MicroHTTPServer",
                .product(name: "Logging", package: "swift-log"), .product(name: "GRDB", package: "GRDB.swift"),
            ],
            path: "Benchmarks/lookout-bench"
        ),
        // The floor under Lookout's memory and start-up: the libraries it must link, none of its code.
        .executableTarget(
            name: "lookout-floor",
            dependencies: ["CCurl", "CMicroHTTPD", .product(name: "GRDB", package: "GRDB.swift")],
            path: "Benchmarks/lookout-floor",
            linkerSettings: leanLinking
        ),
        .executableTarget(
            name: "lookout-fuzz",
            dependencies: [
                "ResilientHTTP", "LookoutCore", "DNSLookup", "LookoutStore", "LookoutAlerting", "LookoutWeb", "MicroHTTPServer", "TCPExchange",
                "LinearRegex", "CronSchedule", "DomainRegistration", .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(name: "TestSupport", dependencies: ["ResilientHTTP"], path: "Tests/Support", exclude: ["Scripts"]),
        .testTarget(name: "MicroHTTPServerTests", dependencies: ["MicroHTTPServer", "ResilientHTTP", "TestSupport"]),
        .testTarget(name: "LinearRegexTests", dependencies: ["LinearRegex"], exclude: ["Fixtures"]),
        .testTarget(name: "CronScheduleTests", dependencies: ["CronSchedule"]),
        .testTarget(name: "DomainRegistrationTests", dependencies: ["DomainRegistration"]),
        .testTarget(name: "ResilientHTTPTests", dependencies: ["ResilientHTTP", "MicroHTTPServer", "TestSupport"]),
        .testTarget(
            name: "LookoutCoreTests",
            dependencies: ["LookoutCore", "LookoutAlerting", "TestSupport", "MicroHTTPServer", .product(name: "Logging", package: "swift-log")]
        ),
        .testTarget(
            name: "LookoutStoreTests",
            dependencies: [
                "LookoutStore", "LookoutCore", "TestSupport", .product(name: "GRDB", package: "GRDB.swift"), .product(name: "Logging", package: "swift-log"),
            ],
            exclude: ["Fixtures"]
        ),
        .testTarget(
            name: "LookoutAlertingTests",
            dependencies: [
                "LookoutAlerting", "LookoutCore", "LookoutStore", "ResilientHTTP", "MicroHTTPServer", "TestSupport",
                .product(name: "GRDB", package: "GRDB.swift"), .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "LookoutWebTests",
            dependencies: [
                "LookoutWeb", "LookoutAlerting", "LookoutStore", "MicroHTTPServer", "ResilientHTTP", "TCPExchange", "ClientSocket", "TestSupport",
                "LinearRegex",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "ResilientHTTP", "LookoutCore", "LookoutStore", "LookoutWeb", "LookoutService", "TestSupport",
                .product(name: "GRDB", package: "GRDB.swift"), .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"), .product(name: "Yams", package: "Yams"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6],
    cxxLanguageStandard: .cxx17
)
