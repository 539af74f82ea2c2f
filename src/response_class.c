/* Net::HTTPResponse's class table: CODE_TO_OBJ and each class's HAS_BODY. */
#include "response.h"

/* CODE_TO_OBJ with each class's HAS_BODY (the same in net-http 0.9.1 and
 * 0.6.0, printed from both). */

static const code_class CODES[] = {
    {"100", "Net::HTTPContinue", 0},
    {"101", "Net::HTTPSwitchProtocol", 0},
    {"102", "Net::HTTPProcessing", 0},
    {"103", "Net::HTTPEarlyHints", 0},
    {"200", "Net::HTTPOK", 1},
    {"201", "Net::HTTPCreated", 1},
    {"202", "Net::HTTPAccepted", 1},
    {"203", "Net::HTTPNonAuthoritativeInformation", 1},
    {"204", "Net::HTTPNoContent", 0},
    {"205", "Net::HTTPResetContent", 0},
    {"206", "Net::HTTPPartialContent", 1},
    {"207", "Net::HTTPMultiStatus", 1},
    {"208", "Net::HTTPAlreadyReported", 1},
    {"226", "Net::HTTPIMUsed", 1},
    {"300", "Net::HTTPMultipleChoices", 1},
    {"301", "Net::HTTPMovedPermanently", 1},
    {"302", "Net::HTTPFound", 1},
    {"303", "Net::HTTPSeeOther", 1},
    {"304", "Net::HTTPNotModified", 0},
    {"305", "Net::HTTPUseProxy", 0},
    {"307", "Net::HTTPTemporaryRedirect", 1},
    {"308", "Net::HTTPPermanentRedirect", 1},
    {"400", "Net::HTTPBadRequest", 1},
    {"401", "Net::HTTPUnauthorized", 1},
    {"402", "Net::HTTPPaymentRequired", 1},
    {"403", "Net::HTTPForbidden", 1},
    {"404", "Net::HTTPNotFound", 1},
    {"405", "Net::HTTPMethodNotAllowed", 1},
    {"406", "Net::HTTPNotAcceptable", 1},
    {"407", "Net::HTTPProxyAuthenticationRequired", 1},
    {"408", "Net::HTTPRequestTimeout", 1},
    {"409", "Net::HTTPConflict", 1},
    {"410", "Net::HTTPGone", 1},
    {"411", "Net::HTTPLengthRequired", 1},
    {"412", "Net::HTTPPreconditionFailed", 1},
    {"413", "Net::HTTPPayloadTooLarge", 1},
    {"414", "Net::HTTPURITooLong", 1},
    {"415", "Net::HTTPUnsupportedMediaType", 1},
    {"416", "Net::HTTPRangeNotSatisfiable", 1},
    {"417", "Net::HTTPExpectationFailed", 1},
    {"421", "Net::HTTPMisdirectedRequest", 1},
    {"422", "Net::HTTPUnprocessableEntity", 1},
    {"423", "Net::HTTPLocked", 1},
    {"424", "Net::HTTPFailedDependency", 1},
    {"426", "Net::HTTPUpgradeRequired", 1},
    {"428", "Net::HTTPPreconditionRequired", 1},
    {"429", "Net::HTTPTooManyRequests", 1},
    {"431", "Net::HTTPRequestHeaderFieldsTooLarge", 1},
    {"451", "Net::HTTPUnavailableForLegalReasons", 1},
    {"500", "Net::HTTPInternalServerError", 1},
    {"501", "Net::HTTPNotImplemented", 1},
    {"502", "Net::HTTPBadGateway", 1},
    {"503", "Net::HTTPServiceUnavailable", 1},
    {"504", "Net::HTTPGatewayTimeout", 1},
    {"505", "Net::HTTPVersionNotSupported", 1},
    {"506", "Net::HTTPVariantAlsoNegotiates", 1},
    {"507", "Net::HTTPInsufficientStorage", 1},
    {"508", "Net::HTTPLoopDetected", 1},
    {"510", "Net::HTTPNotExtended", 1},
    {"511", "Net::HTTPNetworkAuthenticationRequired", 1},
    {"1xx", "Net::HTTPInformation", 0},
};

/* CODE_CLASS_TO_OBJ by the first digit, then Net::HTTPUnknownResponse. */
static const code_class CODE_CLASSES[] = {
    {"1", "Net::HTTPInformation", 0},
    {"2", "Net::HTTPSuccess", 1},
    {"3", "Net::HTTPRedirection", 1},
    {"4", "Net::HTTPClientError", 1},
    {"5", "Net::HTTPServerError", 1},
};
static const code_class UNKNOWN_CLASS = {"", "Net::HTTPUnknownResponse", 1};

const code_class *nh_resp_class(const uint8_t code[3])
{
    for (size_t i = 0; i < sizeof CODES / sizeof CODES[0]; i++)
        if (CODES[i].code[0] == code[0] && CODES[i].code[1] == code[1] && CODES[i].code[2] == code[2])
            return &CODES[i];
    if (code[0] >= '1' && code[0] <= '5')
        return &CODE_CLASSES[code[0] - '1'];
    return &UNKNOWN_CLASS;
}
