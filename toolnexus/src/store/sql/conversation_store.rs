//! [`ConversationStore`](crate::store::ConversationStore) written once for both SQL stores,
//! over the small surface a SQL store gives the conversations ([`ConversationRows`]: its
//! statements, and running one); each store takes it with [`sql_conversation_store!`].

use super::{ConversationSql, SqlParam};
use crate::store::conversation::{ConversationRow, changed};
use crate::store::{Conversation, ConversationInfo, ConversationPage, StoreResult};
use crate::util::BoxFuture;

/// What a SQL store gives the conversations.
pub(crate) trait ConversationRows: Sync {
    /// The conversations' statements in the store's dialect.
    fn conversation_sql(&self) -> &'static ConversationSql;

    /// The rows `sql` selects for `params`.
    fn conversation_rows<'a>(
        &'a self,
        sql: &'static str,
        params: Vec<SqlParam>,
    ) -> BoxFuture<'a, StoreResult<Vec<ConversationRow>>>;

    /// How many rows `sql` changed with `params`.
    fn conversation_change<'a>(
        &'a self,
        sql: &'static str,
        params: Vec<SqlParam>,
    ) -> BoxFuture<'a, StoreResult<u64>>;
}

/// The conversation `sql` selects for `key`.
async fn one<D: ConversationRows>(
    d: &D,
    sql: &'static str,
    key: &str,
) -> StoreResult<Option<Conversation>> {
    let rows = d
        .conversation_rows(sql, vec![SqlParam::Text(key.to_owned())])
        .await?;
    rows.first().map(ConversationRow::decode).transpose()
}

pub(crate) async fn get<D: ConversationRows>(d: &D, id: &str) -> StoreResult<Option<Conversation>> {
    one(d, &d.conversation_sql().get, id).await
}

pub(crate) async fn of_run<D: ConversationRows>(
    d: &D,
    run_id: &str,
) -> StoreResult<Option<Conversation>> {
    one(d, &d.conversation_sql().of_run, run_id).await
}

pub(crate) async fn put<D: ConversationRows>(
    d: &D,
    conversation: &Conversation,
) -> StoreResult<ConversationInfo> {
    let row = ConversationRow::of(conversation)?;
    let sql = d.conversation_sql();
    let sql = if row.expected() == 0 {
        &sql.insert
    } else {
        &sql.update
    };
    if d.conversation_change(sql, row.params()).await? == 1 {
        Ok(row.info())
    } else {
        Err(changed(&row))
    }
}

pub(crate) async fn list<D: ConversationRows>(
    d: &D,
    after: Option<&str>,
    limit: usize,
) -> StoreResult<ConversationPage> {
    let limit = limit.max(1);
    let params = vec![
        SqlParam::Text(after.unwrap_or_default().to_owned()),
        SqlParam::Int(i64::try_from(limit + 1).unwrap_or(i64::MAX)),
    ];
    let rows = d
        .conversation_rows(&d.conversation_sql().list, params)
        .await?;
    Ok(ConversationPage::new(
        rows.iter().map(ConversationRow::info).collect(),
        limit,
    ))
}

pub(crate) async fn delete<D: ConversationRows>(d: &D, id: &str) -> StoreResult<bool> {
    let params = vec![SqlParam::Text(id.to_owned())];
    Ok(d.conversation_change(&d.conversation_sql().delete, params)
        .await?
        == 1)
}

/// `ConversationStore` for the SQL store `$store` (a [`ConversationRows`]), written once.
macro_rules! sql_conversation_store {
    ($store:ty) => {
        impl $crate::store::ConversationStore for $store {
            fn get_conversation<'a>(
                &'a self,
                id: &'a str,
            ) -> $crate::util::BoxFuture<
                'a,
                $crate::store::StoreResult<Option<$crate::store::Conversation>>,
            > {
                Box::pin($crate::store::sql::conversation_store::get(self, id))
            }

            fn conversation_of_run<'a>(
                &'a self,
                run_id: &'a str,
            ) -> $crate::util::BoxFuture<
                'a,
                $crate::store::StoreResult<Option<$crate::store::Conversation>>,
            > {
                Box::pin($crate::store::sql::conversation_store::of_run(self, run_id))
            }

            fn put_conversation<'a>(
                &'a self,
                conversation: &'a $crate::store::Conversation,
            ) -> $crate::util::BoxFuture<
                'a,
                $crate::store::StoreResult<$crate::store::ConversationInfo>,
            > {
                Box::pin($crate::store::sql::conversation_store::put(
                    self,
                    conversation,
                ))
            }

            fn list_conversations<'a>(
                &'a self,
                after: Option<&'a str>,
                limit: usize,
            ) -> $crate::util::BoxFuture<
                'a,
                $crate::store::StoreResult<$crate::store::ConversationPage>,
            > {
                Box::pin($crate::store::sql::conversation_store::list(
                    self, after, limit,
                ))
            }

            fn delete_conversation<'a>(
                &'a self,
                id: &'a str,
            ) -> $crate::util::BoxFuture<'a, $crate::store::StoreResult<bool>> {
                Box::pin($crate::store::sql::conversation_store::delete(self, id))
            }
        }
    };
}
pub(crate) use sql_conversation_store;
