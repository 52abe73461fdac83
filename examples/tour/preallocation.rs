//! Chapter 12: preallocation.
//!
//! A booking system creates one document per room and day ahead of time
//! (a scheduled job), so checking a room is a lookup of `(resourceId, date)` and booking is one
//! atomic `findOneAndUpdate` on the slot: two users who both saw it free cannot both book it.
//! Meeting rooms are booked by the half hour, in a bitmap of 48 bits per day. The chapter
//! allocates 3 rooms x 7 days (twice: the second run creates nothing), books, races two guests
//! for one night, books a stay all or nothing, and books half hours.

use bson::{doc, DateTime};
use pattern_runtime::{Error, Model, SyncOptions};
use serde::{Deserialize, Serialize};

/// `room_days`: one document per room and day, `bookedBy` null while free.
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "preallocation", collection = "room_days")]
#[preallocated(resource = resource_id, slot = date, holder = booked_by)]
pub struct RoomDay {
    #[serde(rename = "_id")]
    pub id: bson::oid::ObjectId,
    pub resource_id: String,
    pub date: DateTime,
    pub booked_by: Option<String>,
}

/// `meeting_days`: a meeting room's day, one bit per half hour.
#[derive(Debug, Clone, Serialize, Deserialize, Model)]
#[serde(rename_all = "camelCase")]
#[model(group = "preallocation", collection = "meeting_days")]
#[preallocated(resource = room, slot = day, bitmap = half_hours, sub_slots = 48)]
pub struct MeetingDay {
    #[serde(rename = "_id")]
    pub id: bson::oid::ObjectId,
    pub room: String,
    pub day: String,
    pub half_hours: i64,
}

const DAY_MS: i64 = 24 * 3600 * 1000;
/// 2025-08-20T00:00:00Z.
const AUG_20: i64 = 1_755_648_000_000;

fn day(n: i64) -> DateTime {
    DateTime::from_millis(AUG_20 + n * DAY_MS)
}

fn grid() -> Vec<RoomDay> {
    ["101", "102", "103"]
        .iter()
        .flat_map(|room| {
            (0..7).map(move |d| RoomDay {
                id: bson::oid::ObjectId::new(),
                resource_id: (*room).into(),
                date: day(d),
                booked_by: None,
            })
        })
        .collect()
}

/// `9:00` for half hour 18.
fn clock(half_hour: u32) -> String {
    format!("{}:{:02}", half_hour / 2, (half_hour % 2) * 30)
}

pub async fn run(client: &mongodb::Client) -> Result<(), Box<dyn std::error::Error>> {
    crate::heading("12. Preallocation: a room x day grid, booked atomically");
    let db = crate::chapter_db(client, "preallocation").await?;
    pattern_runtime::sync(&db)
        .group("preallocation")
        .options(&SyncOptions::new())
        .await?;
    let slots = RoomDay::collection(&db).slots();

    println!("the scheduled job, run twice:");
    println!("  {}", slots.allocate(grid()).await?);
    println!("  {}", slots.allocate(grid()).await?);

    let booked = slots.book("101", day(0), "alice").await?;
    let stored = db
        .collection::<bson::Document>("room_days")
        .find_one(doc! { "resourceId": "101", "date": day(0) })
        .projection(doc! { "_id": 0 })
        .await?
        .ok_or("the slot is stored")?;
    println!(
        "\nalice books room 101 on {}: {stored}",
        booked.date.try_to_rfc3339_string()?
    );
    match slots.book("101", day(0), "bob").await {
        Err(e @ Error::AlreadyBooked { .. }) => println!("bob, the same night: {e}"),
        other => return Err(format!("bob got {other:?}").into()),
    }
    match slots.book("101", day(30), "bob").await {
        Err(e) if e.is_not_allocated() => println!("bob, a month later: {e}"),
        other => return Err(format!("bob got {other:?}").into()),
    }

    // Two guests who both saw room 102 free on the 21st, at the same moment.
    let (carol, dave) = tokio::join!(
        slots.book("102", day(1), "carol"),
        slots.book("102", day(1), "dave")
    );
    println!(
        "\ncarol and dave race for room 102 on the 21st: carol {}, dave {}",
        if carol.is_ok() {
            "gets it"
        } else {
            "is refused"
        },
        if dave.is_ok() {
            "gets it"
        } else {
            "is refused"
        },
    );

    // Three nights, all or nothing: the third is taken.
    slots.book("103", day(4), "frank").await?;
    let stay = [("103", day(2)), ("103", day(3)), ("103", day(4))];
    match slots.book_all(&stay, "erin").await {
        Err(e) => println!("\nerin's three nights in 103 from the 22nd: {e}"),
        Ok(_) => return Err("a stay over a taken night was booked".into()),
    }
    let free: Vec<String> = slots
        .available("103", day(0), day(7))
        .await?
        .iter()
        .map(|s| s.date.try_to_rfc3339_string().unwrap_or_default()[5..10].to_owned())
        .collect();
    println!("  room 103 still free on: {}", free.join(", "));

    // Half hours of a meeting room.
    let meetings = MeetingDay::collection(&db).slots();
    meetings
        .allocate([MeetingDay {
            id: bson::oid::ObjectId::new(),
            room: "会议室A".into(),
            day: "2025-08-20".into(),
            half_hours: 0,
        }])
        .await?;
    meetings.book_range("会议室A", "2025-08-20", 18..20).await?;
    meetings.book_range("会议室A", "2025-08-20", 28..32).await?;
    println!(
        "\n会议室A booked 9:00-10:00 and 14:00-16:00 (two updates with $bitsAllClear and $bit)"
    );
    match meetings.book_range("会议室A", "2025-08-20", 19..21).await {
        Err(e) => println!("  9:30-10:30: {e}"),
        Ok(()) => return Err("an overlapping meeting was booked".into()),
    }
    let free: Vec<String> = meetings
        .free_ranges("会议室A", "2025-08-20")
        .await?
        .iter()
        .map(|r| format!("{}-{}", clock(r.start), clock(r.end)))
        .collect();
    println!("  free: {}", free.join(", "));
    Ok(())
}
