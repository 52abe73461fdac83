use bson::oid::ObjectId;
use pattern_runtime::{Fields, Model};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Address {
    pub street: String,
    pub city: String,
}

/// The source: two fields are copied, the loyalty points (which change often) are not.
#[derive(Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(collection = "customers")]
#[extended_ref(CustomerRef(name, address, nickname), derive(PartialEq))]
pub struct Customer {
    #[serde(rename = "_id")]
    pub id: ObjectId,
    #[serde(rename = "fullName")]
    pub name: String,
    pub address: Address,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub nickname: Option<String>,
    pub loyalty_points: i64,
    #[serde(skip)]
    pub cache: Vec<u8>,
}

/// Two shapes of one source: one kept in sync, one frozen at order time (with the price).
#[derive(Clone, Serialize, Deserialize, Model)]
#[extended_ref(ProductRef(sku, title, r#type))]
#[extended_ref(ProductSnapshot(sku, title, price), snapshot)]
pub struct Product {
    #[serde(rename = "_id")]
    pub id: u32,
    pub sku: String,
    pub title: String,
    pub r#type: String,
    pub price: f64,
}

/// A versioned model may be copied as a snapshot.
#[derive(Clone, Serialize, Deserialize, Model)]
#[versioned(history = "contract_revisions")]
#[extended_ref(ContractSnapshot(terms), snapshot)]
pub struct Contract {
    #[serde(rename = "_id")]
    pub id: u32,
    #[version]
    pub version: i64,
    pub terms: String,
}

#[derive(Clone, Serialize, Deserialize, Fields)]
#[serde(rename_all = "camelCase")]
pub struct OrderItem {
    pub product: ProductRef,
    pub quantity: u32,
    pub price_at_order: f64,
}

/// Each kind of item holds one reference: one field tracks one reference of its items.
#[derive(Clone, Serialize, Deserialize, Fields)]
pub struct Listing {
    pub listing: Option<ProductSnapshot>,
}

#[derive(Clone, Serialize, Deserialize, Fields)]
pub struct Bundle {
    pub bundled: Vec<ProductRef>,
}

/// Items holding no reference need no mode.
#[derive(Clone, Serialize, Deserialize, Fields)]
pub struct Note {
    pub text: String,
}

#[derive(Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
pub struct Order {
    #[serde(rename = "_id")]
    pub id: ObjectId,
    #[serde(rename = "customerSnapshot")]
    #[extended_ref(propagate)]
    pub customer: CustomerRef,
    #[extended_ref(snapshot)]
    pub billed_to: Option<CustomerRef>,
    #[extended_ref(propagate)]
    pub watchers: Vec<CustomerRef>,
    #[extended_ref(propagate, path = product)]
    pub items: Vec<OrderItem>,
    #[extended_ref(snapshot, path = listing)]
    pub listed: Vec<Listing>,
    #[extended_ref(propagate, path = bundled)]
    pub bundles: Vec<Bundle>,
    #[extended_ref(propagate)]
    pub reviewers: Option<Vec<CustomerRef>>,
    pub notes: Vec<Note>,
    #[extended_ref(snapshot)]
    pub featured: ProductSnapshot,
    #[extended_ref(snapshot)]
    pub contract: ContractSnapshot,
    pub total: f64,
}

/// Never called: type-checking it is the test.
#[allow(dead_code)]
async fn rename(
    db: mongodb::Database,
    ada: &Customer,
    pen: &Product,
) -> pattern_runtime::Result<()> {
    let r = CustomerRef::from(ada);
    assert_eq!(r, r.clone());
    let item = OrderItem {
        product: ProductRef::from(pen),
        quantity: 2,
        price_at_order: pen.price,
    };
    let order = Order {
        id: ObjectId::new(),
        customer: r.clone(),
        billed_to: Some(r),
        watchers: vec![CustomerRef::from(ada)],
        items: vec![item],
        listed: vec![Listing {
            listing: Some(ProductSnapshot::from(pen)),
        }],
        bundles: vec![Bundle {
            bundled: vec![ProductRef::from(pen)],
        }],
        reviewers: None,
        notes: vec![Note {
            text: "gift".into(),
        }],
        featured: ProductSnapshot::from(pen),
        contract: ContractSnapshot::from(&Contract {
            id: 1,
            version: 0,
            terms: "net 30".into(),
        }),
        total: 5.0,
    };
    Order::collection(&db).insert(&order).await?;
    Customer::collection(&db)
        .update(
            ada.id,
            bson::doc! { "$set": { Customer::FIELDS.name: "Ada L." } },
        )
        .await?;
    Product::collection(&db)
        .references()
        .rebuild(pen.id)
        .await?;
    Ok(())
}

pub fn main() {}
