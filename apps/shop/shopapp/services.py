"""The shop's eight services: who calls whom, on which route, and what each
one does with a request.

    frontend ─┬─ auth
              └─┬─ catalog ─┬─ inventory (1-3 calls, parallel)
                │           └─ pricing
                ├─ recommend ─┬─ catalog (as above)
                │             └─ reviews
                └─ cart ─── pricing
                (catalog, recommend and cart in parallel)

With a database (`run-local --db`), inventory reads its stock counts from
PostgreSQL, and frontend sends each page view as a job on a queue in it,
which `activity`, a worker, handles after the request has answered.
"""

from dataclasses import dataclass

# The fault target that slows the database's queries instead of a service.
DATABASE = "database"


@dataclass(frozen=True)
class Service:
    route: str
    callees: tuple
    # Median of the service's own work per request, milliseconds.
    work_ms: float
    handler: object
    # Whether it reads the database (`run-local --db`); without one it
    # makes its answer up.
    database: bool = False
    # Its part in the job queue, with a database only: "send" (its
    # handler sends jobs) or "handle" (a worker: `route` None, `handler`
    # takes a job).
    jobs: str = None

    @property
    def needs_db(self):
        return self.database or self.jobs is not None

    @property
    def worker(self):
        return self.jobs == "handle"


def home(ctx):
    user = ctx.calls.get("auth", "/session")
    ctx.work.do()
    if ctx.jobs:
        ctx.jobs.publish({"user": user["user"], "page": "home"})
    products, recommended, cart = ctx.calls.parallel(
        [
            ("catalog", "/products", {"user": user["user"]}),
            ("recommend", "/recommendations", {"user": user["user"]}),
            ("cart", "/cart", {"user": user["user"]}),
        ]
    )
    return {
        "user": user["user"],
        "products": products["items"],
        "recommended": recommended["items"],
        "cart": cart,
    }


def products(ctx):
    ctx.work.do()
    skus = [f"sku-{ctx.rng.randrange(1000):03d}" for _ in range(ctx.rng.randint(1, 3))]
    stock = ctx.calls.parallel([("inventory", f"/stock/{sku}", {}) for sku in skus])
    prices = ctx.calls.get("pricing", "/prices", skus=",".join(skus))["prices"]
    items = [
        {"sku": sku, "in_stock": s["count"], "price": prices[sku]} for sku, s in zip(skus, stock)
    ]
    return {"items": items}


def recommendations(ctx):
    ctx.work.do()
    candidates = ctx.calls.get("catalog", "/products")["items"]
    reviews = ctx.calls.get("reviews", "/reviews", skus=",".join(i["sku"] for i in candidates))
    ranked = sorted(candidates, key=lambda i: -reviews["stars"][i["sku"]])
    return {"items": [i["sku"] for i in ranked]}


def cart(ctx):
    ctx.work.do()
    skus = [f"sku-{ctx.rng.randrange(1000):03d}" for _ in range(ctx.rng.randint(0, 4))]
    prices = ctx.calls.get("pricing", "/prices", skus=",".join(skus))["prices"]
    return {"items": skus, "total": round(sum(prices.values()), 2)}


def session(ctx):
    ctx.work.do()
    return {"user": f"user-{ctx.rng.randrange(10_000)}"}


def record_view(ctx, job):
    ctx.work.do()


def stock(ctx, sku):
    ctx.work.do()
    count = ctx.db.stock(sku) if ctx.db else ctx.rng.randrange(50)
    return {"sku": sku, "count": count}


def prices(ctx):
    ctx.work.do()
    skus = [s for s in ctx.args.get("skus", "").split(",") if s]
    return {"prices": {s: round(1 + ctx.rng.random() * 99, 2) for s in skus}}


def reviews(ctx):
    ctx.work.do()
    skus = [s for s in ctx.args.get("skus", "").split(",") if s]
    return {"stars": {s: ctx.rng.randint(1, 5) for s in skus}}


SERVICES = {
    "frontend": Service(
        "/home", ("auth", "catalog", "recommend", "cart"), 1.5, home, jobs="send"
    ),
    "catalog": Service("/products", ("inventory", "pricing"), 2.0, products),
    "recommend": Service("/recommendations", ("catalog", "reviews"), 3.0, recommendations),
    "cart": Service("/cart", ("pricing",), 1.5, cart),
    "auth": Service("/session", (), 1.0, session),
    "inventory": Service("/stock/<sku>", (), 2.0, stock, database=True),
    "pricing": Service("/prices", (), 1.0, prices),
    "reviews": Service("/reviews", (), 2.5, reviews),
    "activity": Service(None, (), 2.0, record_view, jobs="handle"),
}


def start_order(db):
    """The services in waves, each calling only services of earlier waves;
    without a database (`db` false), no workers."""
    services = {n: s for n, s in SERVICES.items() if db or not s.worker}
    waves, started = [], set()
    while len(started) < len(services):
        wave = [
            name
            for name, s in services.items()
            if name not in started and started.issuperset(s.callees)
        ]
        waves.append(wave)
        started.update(wave)
    return waves
