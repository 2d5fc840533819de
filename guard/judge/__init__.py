"""One turn judged, in stages: the guard object, the one way in (``pipeline``: ``load_guard``, ``Guard.judge``), the
detector (``detector``) that plans every pair (``planning``), scores them and builds each verdict (``building``,
``verdicts``), the policies that choose a reply (``policies``; the repair mode's plan, ``repair``; the reminder,
``reminders``), and the finished report as records (``report``), its words (``wording``: the one place that words a
verdict and a turn), its one JSON form (``jsonform``) and how older versions wrote it (``report_versions``)."""
