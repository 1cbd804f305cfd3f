/// Lookout's version: in the User-Agent of every request, `lookout_build_info`, the status page's
/// footer and `--version`. It lives in the lowest module so that every module reads the same one.
public enum LookoutVersion {
    /// `MAJOR.MINOR.PATCH`, without a leading `v`.
    public static let string = "0.1.0"
}
