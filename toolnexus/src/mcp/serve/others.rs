//! The rest of a server next to a toolkit: a host's rmcp [`ServerHandler`] answers
//! resources, prompts and completion ([`McpService::with_handler`]), while the toolkit keeps
//! `tools/list` and `tools/call` (and what the service does for them: elicitations, durable
//! calls, tasks, logging and progress).

use rmcp::model::{
    CompleteRequestParams, CompleteResult, GetPromptRequestParams, GetPromptResponse,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, SubscribeRequestParams,
    UnsubscribeRequestParams,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};

use crate::tool::BoxFuture;

type Answer<'a, T> = BoxFuture<'a, Result<T, ErrorData>>;

/// The trait [`Others`] (the methods of a host's handler the service hands on, object-safe)
/// and its impl for every [`ServerHandler`]: each method the handler's own, boxed.
macro_rules! others {
    ($($(#[$attr:meta])* fn $name:ident($param:ty) -> $out:ty;)*) => {
        /// The methods of a host's handler the service hands on, object-safe.
        pub(super) trait Others: Send + Sync {
            fn capabilities(&self) -> ServerCapabilities;
            $(
                $(#[$attr])*
                fn $name(&self, p: $param, c: RequestContext<RoleServer>) -> Answer<'_, $out>;
            )*
        }

        impl<H: ServerHandler> Others for H {
            fn capabilities(&self) -> ServerCapabilities {
                self.get_info().capabilities
            }
            $(
                $(#[$attr])*
                fn $name(&self, p: $param, c: RequestContext<RoleServer>) -> Answer<'_, $out> {
                    Box::pin(ServerHandler::$name(self, p, c))
                }
            )*
        }
    };
}

others! {
    fn list_resources(Option<PaginatedRequestParams>) -> ListResourcesResult;
    fn list_resource_templates(Option<PaginatedRequestParams>) -> ListResourceTemplatesResult;
    fn read_resource(ReadResourceRequestParams) -> ReadResourceResponse;
    #[allow(deprecated)] // legacy resources/subscribe, still in 2025-11-25
    fn subscribe(SubscribeRequestParams) -> ();
    #[allow(deprecated)] // legacy resources/unsubscribe, still in 2025-11-25
    fn unsubscribe(UnsubscribeRequestParams) -> ();
    fn list_prompts(Option<PaginatedRequestParams>) -> ListPromptsResult;
    fn get_prompt(GetPromptRequestParams) -> GetPromptResponse;
    fn complete(CompleteRequestParams) -> CompleteResult;
}
