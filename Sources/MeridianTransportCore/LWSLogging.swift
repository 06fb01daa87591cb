#if canImport(Glibc)
import Glibc
#endif
internal import CLibWebSockets

/// Sets lws's process-wide log mask: errors only, unless `MERIDIAN_LWS_LOG` holds another
/// mask (e.g. 255 for everything) to debug the C library.
package func configureLWSLogging() {
    var mask = LLL_ERR
    if let value = getenv("MERIDIAN_LWS_LOG"), let parsed = Int32(String(cString: value)) {
        mask = parsed
    }
    lws_set_log_level(mask, nil)
}
